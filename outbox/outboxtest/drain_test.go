package outboxtest_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/outbox/memstore"
	"github.com/reliar/reliar/outbox/outboxtest"
)

func newMemstore(t *testing.T) *memstore.Store {
	t.Helper()
	s, err := memstore.New()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func deadline(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func TestDrainPublishesEveryDueMessage(t *testing.T) {
	ctx := deadline(t)
	store := newMemstore(t)
	var msgs []reliar.Outgoing
	for i := range 250 {
		msgs = append(msgs, reliar.NewMsg(orderPlaced{Total: int64(i)}))
	}
	if _, err := store.Enqueue(ctx, msgs...); err != nil {
		t.Fatal(err)
	}
	var pub outboxtest.RecordingPublisher
	st := outboxtest.Drain(ctx, t, store, &pub, outbox.Settings{BatchSize: 100})
	if st.Pending != 0 || st.Dead != 0 {
		t.Fatalf("stats after Drain: %+v", st)
	}
	if got := len(pub.Published()); got != 250 {
		t.Fatalf("published %d, want 250", got)
	}
}

func TestDrainOnAnEmptyOutboxReturnsAtOnce(t *testing.T) {
	var pub outboxtest.RecordingPublisher
	st := outboxtest.Drain(deadline(t), t, newMemstore(t), &pub, outbox.Settings{})
	if st.Pending != 0 || len(pub.Attempts()) != 0 {
		t.Fatalf("stats %+v, attempts %d", st, len(pub.Attempts()))
	}
}

// The failure classes the publisher injects reach the dispatcher: a
// permanent failure goes dead, a transient one is scheduled for a retry,
// and Drain returns with it pending.
func TestDrainWithInjectedFailures(t *testing.T) {
	ctx := deadline(t)
	store := newMemstore(t)
	ids, err := store.Enqueue(ctx,
		reliar.NewMsg(orderPlaced{OrderID: "ok"}),
		reliar.NewMsg(orderCancelled{OrderID: "poison"}),
		reliar.NewMsg(otherMessage{}),
	)
	if err != nil {
		t.Fatal(err)
	}
	var pub outboxtest.RecordingPublisher
	pub.FailType("orders.cancelled", reliar.FailurePermanent, -1)
	pub.FailWhen(func(e *reliar.SerializedEnvelope) bool { return e.ID == ids[2] }, reliar.FailureTransient, 1)

	st := outboxtest.Drain(ctx, t, store, &pub, outbox.Settings{})
	if st.Dead != 1 || st.Scheduled != 1 || st.Due != 0 || st.Leased != 0 {
		t.Fatalf("stats after Drain: %+v, want 1 dead and 1 scheduled", st)
	}
	if got := pub.Published(); len(got) != 1 || got[0].ID != ids[0] {
		t.Fatalf("published %v, want only %s", got, ids[0])
	}
	kinds := map[reliar.MessageID]error{}
	for _, a := range pub.Attempts() {
		kinds[a.Envelope.ID] = a.Err
	}
	if err := kinds[ids[1]]; !errors.Is(err, outboxtest.ErrInjected) || !reliar.IsPermanent(err) {
		t.Errorf("poison attempt: %v, want a permanent injected failure", err)
	}
	if err := kinds[ids[2]]; !errors.Is(err, outboxtest.ErrInjected) || reliar.IsPermanent(err) {
		t.Errorf("retried attempt: %v, want a transient injected failure", err)
	}

	// The transient rule was used up: once the retry is due, it publishes.
	store.Advance(time.Hour)
	st = outboxtest.Drain(ctx, t, store, &pub, outbox.Settings{})
	if st.Pending != 0 || len(pub.Published()) != 2 {
		t.Fatalf("after the retry: stats %+v, published %d", st, len(pub.Published()))
	}
}

// A dispatcher that cannot finish fails the test when ctx ends, naming what
// was left.
func TestDrainFailsWhenTheContextEnds(t *testing.T) {
	store := newMemstore(t)
	if _, err := store.Enqueue(context.Background(), reliar.NewMsg(orderPlaced{})); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pub := &blockingPublisher{started: make(chan struct{}), until: ctx}
	go func() {
		<-pub.started
		cancel()
	}()
	var rt recordTB
	outboxtest.Drain(ctx, &rt, store, pub, outbox.Settings{})
	// The end of ctx is seen either by Drain itself or by the store call it
	// was making (then the store's own words stand between), so only the
	// parts every path has are checked.
	mustContain(t, rt.failed(t), "outboxtest: Drain: ", "context canceled", "(last stats: due=")
}

func TestDrainRefusesBadSettings(t *testing.T) {
	var rt recordTB
	var pub outboxtest.RecordingPublisher
	outboxtest.Drain(deadline(t), &rt, newMemstore(t), &pub, outbox.Settings{MaxClaims: -1})
	mustContain(t, rt.failed(t), "outboxtest: Drain:", "MaxClaims")
}

// blockingPublisher blocks every publish until until ends.
type blockingPublisher struct {
	once    sync.Once
	started chan struct{}
	until   context.Context
}

func (p *blockingPublisher) Publish(ctx context.Context, _ *reliar.SerializedEnvelope) error {
	p.once.Do(func() { close(p.started) })
	<-p.until.Done()
	return p.until.Err()
}

func TestRecordingPublisherConcurrentUse(t *testing.T) {
	var pub outboxtest.RecordingPublisher
	pub.FailType("orders.cancelled", reliar.FailureTransient, 5)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for range 50 {
				body := reliar.Message(orderPlaced{})
				if i%2 == 0 {
					body = orderCancelled{}
				}
				env := &reliar.SerializedEnvelope{ID: reliar.NewMessageID(), MessageType: body.MessageType(), Payload: []byte("{}")}
				_ = pub.Publish(context.Background(), env)
			}
		})
	}
	wg.Wait()
	failed := 0
	for _, a := range pub.Attempts() {
		if a.Err != nil {
			failed++
		}
	}
	if len(pub.Attempts()) != 400 || failed != 5 || len(pub.Published()) != 395 {
		t.Fatalf("attempts %d, failed %d, published %d; want 400, 5, 395", len(pub.Attempts()), failed, len(pub.Published()))
	}
	pub.Reset()
	if len(pub.Attempts()) != 0 {
		t.Fatal("Reset kept attempts")
	}
}

// The recorded envelope is a copy: a publisher that reuses its buffers
// after Publish returns cannot change it.
func TestRecordingPublisherCopies(t *testing.T) {
	var pub outboxtest.RecordingPublisher
	env := &reliar.SerializedEnvelope{MessageType: "t", Payload: []byte("abc"), Headers: map[string]string{"k": "v"}}
	if err := pub.Publish(context.Background(), env); err != nil {
		t.Fatal(err)
	}
	env.Payload[0] = 'X'
	env.Headers["k"] = "changed"
	got := pub.Published()[0]
	if string(got.Payload) != "abc" || got.Headers["k"] != "v" {
		t.Fatalf("recorded %q %v, changed with the original", got.Payload, got.Headers)
	}
}

// Drain waits on the dispatcher's claims and outcome writes, not on a
// timer: with poll intervals of an hour it still returns as soon as the
// last outcome is written.
func TestDrainNeedsNoPollInterval(t *testing.T) {
	ctx := deadline(t)
	store := newMemstore(t)
	for i := range 40 {
		if _, err := store.Enqueue(ctx, reliar.NewMsg(orderPlaced{Total: int64(i)})); err != nil {
			t.Fatal(err)
		}
	}
	var pub outboxtest.RecordingPublisher
	st := outboxtest.Drain(ctx, t, store, &pub, outbox.Settings{
		BatchSize: 16, MaxInFlight: 16, PollInterval: time.Hour, IdlePollInterval: time.Hour,
	})
	if st.Pending != 0 || len(pub.Published()) != 40 {
		t.Fatalf("stats %+v, published %d", st, len(pub.Published()))
	}
}

func TestRecordingPublisherRecordsACancelledCall(t *testing.T) {
	var pub outboxtest.RecordingPublisher
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := pub.Publish(ctx, &reliar.SerializedEnvelope{MessageType: "t"})
	if !errors.Is(err, context.Canceled) || len(pub.Attempts()) != 1 || len(pub.Published()) != 0 {
		t.Fatalf("err %v, attempts %d, published %d", err, len(pub.Attempts()), len(pub.Published()))
	}
}
