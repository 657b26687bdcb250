package outboxtest_test

import (
	"context"
	"fmt"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/outbox/memstore"
	"github.com/reliar/reliar/outbox/outboxtest"
)

// OrderPlaced is the message of the examples.
type OrderPlaced struct {
	OrderID string `json:"order_id"`
	Total   int64  `json:"total"`
}

// MessageType names the message.
func (OrderPlaced) MessageType() string { return "orders.placed" }

// Tx stands for the application's transaction type (pgx.Tx, *sql.Tx).
type Tx struct{}

// PlaceOrder is the code under test: a handler that depends on the
// Enqueuer interface, not on a store.
func PlaceOrder(ctx context.Context, out outbox.Enqueuer[*Tx], tx *Tx, customer, orderID string, total int64) error {
	// ... the business change in tx, then its message:
	_, err := out.Enqueue(ctx, tx, reliar.Msg(reliar.Envelope[OrderPlaced]{
		Body:        OrderPlaced{OrderID: orderID, Total: total},
		OrderingKey: customer,
		Metadata:    reliar.Metadata{TenantID: "acme"},
	}))
	return err
}

// printT is a TB that prints failures; a test passes its *testing.T.
type printT struct{}

func (printT) Helper()                           {}
func (printT) Errorf(format string, args ...any) { fmt.Printf(format+"\n", args...) }
func (printT) FailNow()                          {}

// A handler's unit test: hand it a FakeEnqueuer and assert on what it
// enqueued, by type, ordering key, tenant and payload.
func ExampleRequireEnqueued() {
	ctx := context.Background()
	var t outboxtest.TB = printT{} // in a test: t *testing.T

	var fake outboxtest.FakeEnqueuer[*Tx]
	if err := PlaceOrder(ctx, &fake, &Tx{}, "customer-7", "o-1", 4200); err != nil {
		panic(err)
	}

	got := outboxtest.RequireEnqueued[OrderPlaced](t, fake.Enqueued(), &outboxtest.RequireOpts{
		OrderingKey: "customer-7",
		TenantID:    "acme",
		Payload:     outboxtest.JSONBody(func(o OrderPlaced) bool { return o.Total == 4200 }),
	})
	fmt.Println("found order", got.Body.OrderID)
	outboxtest.RequireNotEnqueued[OrderPlaced](t, fake.Enqueued(), &outboxtest.RequireOpts{TenantID: "globex"})
	// Output:
	// found order o-1
}

// A failed assertion lists what was enqueued.
func ExampleRequireEnqueued_failure() {
	var t outboxtest.TB = printT{}
	var fake outboxtest.FakeEnqueuer[*Tx]
	m := reliar.NewMsg(OrderPlaced{OrderID: "o-1", Total: 4200})
	m.ID, _ = reliar.ParseMessageID("01936f1e-0000-7000-8000-000000000001")
	if _, err := fake.Enqueue(context.Background(), &Tx{}, m); err != nil {
		panic(err)
	}
	outboxtest.RequireEnqueued[OrderPlaced](t, fake.Enqueued(), &outboxtest.RequireOpts{TenantID: "acme"})
	// Output:
	// outboxtest: expected 1 message of type "orders.placed" with tenant "acme", found none
	// enqueued (1):
	//   #1 orders.placed id=01936f1e-0000-7000-8000-000000000001 payload={"order_id":"o-1","total":4200}
}

// Drain runs a dispatcher until the outbox is empty, with a recording
// publisher that fails one message type permanently.
func ExampleDrain() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var t outboxtest.TB = printT{}

	store, err := memstore.New()
	if err != nil {
		panic(err)
	}
	fake := outboxtest.FakeEnqueuer[*Tx]{Store: store} // the handler's messages land in store
	for i, total := range []int64{100, 200, -1} {
		if err := PlaceOrder(ctx, &fake, &Tx{}, "customer-7", fmt.Sprint("o-", i+1), total); err != nil {
			panic(err)
		}
	}

	var pub outboxtest.RecordingPublisher
	pub.FailWhen(func(e *reliar.SerializedEnvelope) bool {
		return outboxtest.JSONBody(func(o OrderPlaced) bool { return o.Total < 0 })(e.Payload)
	}, reliar.FailurePermanent, -1)

	st := outboxtest.Drain(ctx, t, store, &pub, outbox.Settings{})
	fmt.Println("published:", len(pub.Published()), "dead:", st.Dead, "pending:", st.Pending)
	// Output:
	// published: 2 dead: 1 pending: 0
}
