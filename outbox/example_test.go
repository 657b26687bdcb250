package outbox_test

import (
	"context"
	"fmt"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/outbox/memstore"
)

type orderPlaced struct {
	OrderID string `json:"order_id"`
}

func (orderPlaced) MessageType() string { return "orders.placed" }

// A dispatcher publishes what the application enqueued. Here the store is
// the in-memory one and the publisher prints; in production the store is
// pgstore (enqueue inside the business transaction) and the publisher a
// broker's.
func Example() {
	store, err := memstore.New()
	if err != nil {
		panic(err)
	}
	if _, err := store.Enqueue(context.Background(), reliar.NewMsg(orderPlaced{OrderID: "A-1"})); err != nil {
		panic(err)
	}

	published := make(chan struct{})
	pub := reliar.PublisherFunc(func(ctx context.Context, env *reliar.SerializedEnvelope) error {
		fmt.Printf("%s %s\n", env.MessageType, env.Payload)
		close(published)
		return nil
	})

	d, err := outbox.New(store, pub, outbox.DefaultSettings())
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- d.Run(ctx) }()
	<-published
	cancel() // drains: the completion is written before Run returns
	if err := <-done; err != nil {
		panic(err)
	}
	st, _ := store.Stats(context.Background())
	fmt.Println("pending:", st.Pending)
	// Output:
	// orders.placed {"order_id":"A-1"}
	// pending: 0
}

// Settings start from the defaults; New validates them.
func ExampleNew() {
	// Zero fields take their defaults, derived from the fields that are set:
	// a 5s lease brings the publish, store and drain timeouts down with it.
	pub := reliar.PublisherFunc(func(context.Context, *reliar.SerializedEnvelope) error { return nil })
	store, err := memstore.New()
	if err != nil {
		panic(err)
	}
	d, err := outbox.New(store, pub, outbox.Settings{Lease: 5 * time.Second})
	if err != nil {
		panic(err)
	}
	s := d.Settings()
	fmt.Println(s.BatchSize, s.MaxInFlight, s.PublishTimeout, s.StoreTimeout, s.DrainTimeout)

	// Every problem of one settings value is reported at once.
	_, err = outbox.New(store, pub, outbox.Settings{BatchSize: -1, Lease: 5 * time.Second, PublishTimeout: 10 * time.Second})
	fmt.Println(err)
	// Output:
	// 512 1536 1.666s 833ms 3.333s
	// outbox: invalid settings: BatchSize must be positive (zero means the default)
	// outbox: invalid settings: Lease (5s) must be longer than PublishTimeout (10s)
}

// A custom retry policy replaces the exponential backoff.
func ExampleRetryPolicyFunc() {
	s := outbox.DefaultSettings()
	s.Retry = outbox.RetryPolicyFunc(func(f outbox.Failure) outbox.Decision {
		if f.Kind == reliar.FailurePermanent || f.Attempts >= 2 {
			return outbox.DeadLetter(outbox.DeadMaxAttempts)
		}
		return outbox.RetryAfter(time.Duration(f.Attempts+1) * time.Minute)
	})
	fmt.Println(s.Retry.Decide(outbox.Failure{Attempts: 0}).Delay)
	fmt.Println(s.Retry.Decide(outbox.Failure{Attempts: 2}).Reason)
	// Output:
	// 1m0s
	// max_attempts
}

// The maintainer keeps the table small: purge and expiry on an interval.
func ExampleMaintainer() {
	store, err := memstore.New()
	if err != nil {
		panic(err)
	}
	m, err := outbox.NewMaintainer(store, outbox.DefaultMaintainerSettings())
	if err != nil {
		panic(err)
	}
	r, err := m.RunOnce(context.Background())
	fmt.Printf("published deleted %d, dead deleted %d, expired %d, err %v\n", r.PublishedDeleted, r.DeadDeleted, r.Expired, err)
	// Output: published deleted 0, dead deleted 0, expired 0, err <nil>
}
