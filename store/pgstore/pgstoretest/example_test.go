package pgstoretest_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/outbox/outboxtest"
	"github.com/reliar/reliar/store/pgstore"
	"github.com/reliar/reliar/store/pgstore/pgstoretest"
)

// OrderPlaced is the example's message.
type OrderPlaced struct {
	OrderID string `json:"order_id"`
	Total   int64  `json:"total"`
}

// MessageType names the message.
func (OrderPlaced) MessageType() string { return "orders.placed" }

// PlaceOrder is the code under test: it takes the outbox as an
// outbox.Enqueuer[pgx.Tx], which *pgstore.Store is.
func PlaceOrder(ctx context.Context, out outbox.Enqueuer[pgx.Tx], tx pgx.Tx, customer, orderID string, total int64) error {
	// ... INSERT INTO orders ... in tx, then:
	_, err := out.Enqueue(ctx, tx, reliar.Msg(reliar.Envelope[OrderPlaced]{
		Body:        OrderPlaced{OrderID: orderID, Total: total},
		OrderingKey: customer,
	}))
	return err
}

// printT is a TB that prints failures; a test passes its *testing.T.
type printT struct{}

func (printT) Helper()                           {}
func (printT) Errorf(format string, args ...any) { fmt.Printf(format+"\n", args...) }
func (printT) FailNow()                          {}

// exampleStore makes a store on a fresh schema of the examples' database;
// the returned function drops it.
func exampleStore(ctx context.Context) (*pgxpool.Pool, *pgstore.Store, func()) {
	pool, err := pgxpool.New(ctx, testDSN)
	if err != nil {
		log.Fatal(err)
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "reliar_example_" + hex.EncodeToString(b)
	cleanup := func() {
		_, _ = pool.Exec(context.WithoutCancel(ctx), `DROP SCHEMA IF EXISTS "`+schema+`" CASCADE`)
		pool.Close()
	}
	if err := pgstore.Migrate(ctx, pool, pgstore.WithSchema(schema)); err != nil {
		cleanup()
		log.Fatal(err)
	}
	store, err := pgstore.New(ctx, pool, pgstore.WithSchema(schema))
	if err != nil {
		cleanup()
		log.Fatal(err)
	}
	return pool, store, cleanup
}

// Assert inside the test's transaction what the handler enqueued, then
// roll it back: nothing is left behind.
func ExampleRequireEnqueuedTx() {
	ctx := context.Background()
	pool, store, cleanup := exampleStore(ctx)
	defer cleanup()
	var t outboxtest.TB = printT{} // in a test: t *testing.T

	tx, err := pool.Begin(ctx)
	if err != nil {
		log.Fatal(err)
	}
	if err := PlaceOrder(ctx, store, tx, "customer-7", "o-1", 4200); err != nil {
		log.Fatal(err)
	}

	got := pgstoretest.RequireEnqueuedTx[OrderPlaced](ctx, t, store, tx, &outboxtest.RequireOpts{
		OrderingKey: "customer-7",
		Payload:     outboxtest.JSONBody(func(o OrderPlaced) bool { return o.Total == 4200 }),
	})
	fmt.Println("enqueued", got.Body.OrderID, "for", got.Envelope.OrderingKey)
	pgstoretest.RequireNotEnqueuedTx[OrderPlaced](ctx, t, store, tx, &outboxtest.RequireOpts{OrderingKey: "customer-8"})

	if err := tx.Rollback(ctx); err != nil {
		log.Fatal(err)
	}
	after, err := pool.Begin(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer after.Rollback(ctx)
	pgstoretest.RequireNotEnqueuedTx[OrderPlaced](ctx, t, store, after, nil)
	fmt.Println("after the rollback: nothing")
	// Output:
	// enqueued o-1 for customer-7
	// after the rollback: nothing
}

// Commit, then run a dispatcher until the outbox is empty and look at
// what it published.
func ExampleRequireManyEnqueuedTx() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pool, store, cleanup := exampleStore(ctx)
	defer cleanup()
	var t outboxtest.TB = printT{}

	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		for _, id := range []string{"o-1", "o-2"} {
			if err := PlaceOrder(ctx, store, tx, "customer-7", id, 100); err != nil {
				return err
			}
		}
		pgstoretest.RequireManyEnqueuedTx(ctx, t, store, tx, []outboxtest.Expected{
			{Type: "orders.placed", Opts: &outboxtest.RequireOpts{Payload: outboxtest.JSONBody(func(o OrderPlaced) bool { return o.OrderID == "o-1" })}},
			{Type: "orders.placed", Opts: &outboxtest.RequireOpts{Payload: outboxtest.JSONBody(func(o OrderPlaced) bool { return o.OrderID == "o-2" })}},
		})
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}

	var pub outboxtest.RecordingPublisher
	st := outboxtest.Drain(ctx, t, store, &pub, outbox.Settings{})
	fmt.Println("published:", len(pub.Published()), "pending:", st.Pending)
	// Output:
	// published: 2 pending: 0
}
