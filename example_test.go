package reliar_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/memstore"
)

type orderPlaced struct {
	OrderID string `json:"order_id"`
}

func (orderPlaced) MessageType() string { return "orders.placed" }

// A message with user headers, a tenant, an ordering key and a delivery
// delay: build an Envelope, erase its type with Msg and enqueue it in the
// business transaction (memstore stands in for a database here). Header
// values travel to the broker as they are and are never logged.
func ExampleMsg() {
	ctx := context.Background()
	store, err := memstore.New()
	if err != nil {
		panic(err)
	}
	msg := reliar.Msg(reliar.Envelope[orderPlaced]{
		Body:        orderPlaced{OrderID: "o-42"},
		Headers:     map[string]string{"x-request-origin": "checkout", "x-priority": "high"},
		Metadata:    reliar.Metadata{TenantID: "acme", Correlation: reliar.Correlation{CorrelationID: "cart-7"}},
		OrderingKey: "order-o-42",
		AvailableAt: time.Now().Add(time.Minute),
	})
	ids, err := store.Enqueue(ctx, msg)
	if err != nil {
		panic(err)
	}
	st, _ := store.Stats(ctx)
	fmt.Println(len(ids), "enqueued;", st.Scheduled, "scheduled for later")
	// Output: 1 enqueued; 1 scheduled for later
}

// NewMsg wraps a body with a fresh UUIDv7 id and empty metadata.
func ExampleNewMsg() {
	m := reliar.NewMsg(orderPlaced{OrderID: "o-43"})
	typ, version := reliar.TypeOf(m.Body)
	fmt.Println(typ, version, m.ID.Version())
	// Output: orders.placed 1 VERSION_7
}

// A publisher marks the failures no retry can fix as permanent: the row goes
// dead at once. Every other error is retried.
func ExamplePermanent() {
	tooLarge := reliar.Permanent(errors.New("message over the broker's max_payload"))
	timeout := fmt.Errorf("publish: %w", context.DeadlineExceeded)
	fmt.Println(reliar.KindOf(tooLarge), reliar.IsPermanent(tooLarge))
	fmt.Println(reliar.KindOf(timeout), reliar.IsPermanent(timeout))
	// Output:
	// permanent true
	// transient false
}
