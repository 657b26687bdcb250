package memstore_test

import (
	"context"
	"fmt"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/memstore"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

type orderPlaced struct {
	OrderID string `json:"order_id"`
}

func (orderPlaced) MessageType() string { return "orders.placed" }

// A unit test of code that enqueues messages: enqueue into a memstore, then
// claim what a dispatcher would publish and mark it published.
func Example() {
	ctx := context.Background()
	store, err := memstore.New()
	if err != nil {
		panic(err)
	}

	if _, err := store.Enqueue(ctx, reliar.NewMsg(orderPlaced{OrderID: "o-1"})); err != nil {
		panic(err)
	}

	batch, err := store.Acquire(ctx, outboxdriver.AcquireRequest{Worker: "test", BatchSize: 10, Lease: time.Minute})
	if err != nil {
		panic(err)
	}
	for _, rec := range batch.Records {
		fmt.Printf("%s %s attempt %d\n", rec.Envelope.MessageType, rec.Envelope.Payload, rec.Envelope.Attempt)
		if _, err := store.Complete(ctx, []outboxdriver.Lease{rec.Lease()}); err != nil {
			panic(err)
		}
	}

	st, err := store.Stats(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println("pending:", st.Pending)
	// Output:
	// orders.placed {"order_id":"o-1"} attempt 1
	// pending: 0
}

// Advance moves the store's clock, so a test can make a delayed message due
// (or a lease lapse) without sleeping.
func ExampleStore_Advance() {
	ctx := context.Background()
	store, err := memstore.New()
	if err != nil {
		panic(err)
	}
	later := reliar.NewMsg(orderPlaced{OrderID: "o-2"})
	later.AvailableAt = time.Now().Add(time.Hour)
	if _, err := store.Enqueue(ctx, later); err != nil {
		panic(err)
	}

	claim := func() int {
		b, err := store.Acquire(ctx, outboxdriver.AcquireRequest{Worker: "test", BatchSize: 10, Lease: time.Minute})
		if err != nil {
			panic(err)
		}
		return len(b.Records)
	}
	fmt.Println("claimed now:", claim())
	store.Advance(time.Hour + time.Second)
	fmt.Println("claimed an hour later:", claim())
	// Output:
	// claimed now: 0
	// claimed an hour later: 1
}

// Inspect shows a row's bookkeeping, for assertions on what a dispatcher
// recorded.
func ExampleStore_Inspect() {
	ctx := context.Background()
	store, err := memstore.New()
	if err != nil {
		panic(err)
	}
	ids, err := store.Enqueue(ctx, reliar.NewMsg(orderPlaced{OrderID: "o-3"}))
	if err != nil {
		panic(err)
	}
	b, err := store.Acquire(ctx, outboxdriver.AcquireRequest{Worker: "test", BatchSize: 1, Lease: time.Minute})
	if err != nil {
		panic(err)
	}
	_, err = store.Fail(ctx, []outboxdriver.FailedOutcome{{Lease: b.Records[0].Lease(), Error: "broker down", RetryAfter: time.Second}})
	if err != nil {
		panic(err)
	}

	st, _ := store.Inspect(ids[0])
	fmt.Println("attempts:", st.Attempts, "last error:", *st.LastError, "leased:", st.LockedBy != nil)
	// Output:
	// attempts: 1 last error: broker down leased: false
}
