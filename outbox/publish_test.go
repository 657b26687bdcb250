package outbox_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox"
)

// runUntil runs d until cond holds (checked every 10ms of bubble time),
// then stops it and fails the test on a Run error.
func runUntil(t *testing.T, d *outbox.Dispatcher, cond func() bool) {
	t.Helper()
	stop, done := running(t, d)
	for !cond() {
		select {
		case err := <-done:
			t.Fatalf("Run ended early: %v", err)
		default:
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err, _ := stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
}

func TestPublishTimeoutIsTransientAndRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newFaultStore()
		id := enqueue(t, store.Store, 1)[0]
		s := testSettings()
		s.PublishTimeout = 2 * time.Second
		s.Retry = outbox.ExponentialBackoff{Base: 30 * time.Second, Max: time.Minute, Multiplier: 2, Jitter: outbox.Off, MaxAttempts: 5}
		var calls int
		pub := newFakePublisher(func(ctx context.Context, env *reliar.SerializedEnvelope) error {
			calls++
			if calls == 1 {
				<-ctx.Done() // the first attempt hangs past PublishTimeout
				return ctx.Err()
			}
			return nil
		})
		d, _ := outbox.New(store, pub, s)
		start := time.Now()
		runUntil(t, d, func() bool {
			st, _ := store.Inspect(id)
			return st.Attempts == 1 && st.LockedBy == nil
		})
		st := stateOf(t, store.Store, id)
		if st.DeadAt != nil || st.PublishedAt != nil {
			t.Fatalf("timed-out row should be scheduled for a retry: %+v", st)
		}
		if want := start.Add(s.PublishTimeout + 30*time.Second); !st.AvailableAt.Equal(want) {
			t.Fatalf("retry due at %v, want %v (timeout + Base)", st.AvailableAt.Sub(start), want.Sub(start))
		}
		if st.LastError == nil || !strings.Contains(*st.LastError, "deadline exceeded") {
			t.Fatalf("last_error = %v", st.LastError)
		}
		// The retry publishes it once due.
		d2, _ := outbox.New(store, pub, s)
		runUntil(t, d2, func() bool { return pub.deliveredCount() == 1 })
		if !time.Now().After(st.AvailableAt) && !time.Now().Equal(st.AvailableAt) {
			t.Fatalf("published before the retry delay passed")
		}
	})
}

func TestPermanentFailureGoesDeadAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newFaultStore()
		id := enqueue(t, store.Store, 1)[0]
		m := newCountingMetrics()
		pub := newFakePublisher(func(context.Context, *reliar.SerializedEnvelope) error {
			return reliar.Permanent(errors.New("topic does not exist"))
		})
		d, _ := outbox.New(store, pub, testSettings(), outbox.WithMetrics(m))
		runUntil(t, d, func() bool { st, _ := store.Inspect(id); return st.DeadAt != nil })
		st := stateOf(t, store.Store, id)
		if *st.DeadReason != string(outbox.DeadPermanent) || st.Attempts != 1 || *st.LastError != "topic does not exist" {
			t.Fatalf("dead row: reason %v attempts %d error %v", *st.DeadReason, st.Attempts, *st.LastError)
		}
		if m.snapshot().dead[outbox.DeadPermanent] != 1 {
			t.Fatalf("dead metric not counted: %+v", m.snapshot().dead)
		}
	})
}

func TestPanicGoesDead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newFaultStore()
		ids := enqueue(t, store.Store, 3)
		pub := newFakePublisher(func(_ context.Context, env *reliar.SerializedEnvelope) error {
			if env.ID == ids[1] {
				panic("boom: nil map\nsecond line " + strings.Repeat("x", 500))
			}
			return nil
		})
		d, _ := outbox.New(store, pub, testSettings())
		runUntil(t, d, func() bool { st, _ := store.Inspect(ids[1]); return st.DeadAt != nil && pub.deliveredCount() == 2 })
		st := stateOf(t, store.Store, ids[1])
		if *st.DeadReason != string(outbox.DeadPermanent) || *st.LastError != "publisher panicked: boom: nil map" {
			t.Fatalf("panicked row: reason %q error %q", *st.DeadReason, *st.LastError)
		}
	})
}

func TestPanicValueIsTruncated(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newFaultStore()
		id := enqueue(t, store.Store, 1)[0]
		pub := newFakePublisher(func(context.Context, *reliar.SerializedEnvelope) error {
			panic(strings.Repeat("é", 300))
		})
		d, _ := outbox.New(store, pub, testSettings())
		runUntil(t, d, func() bool { st, _ := store.Inspect(id); return st.DeadAt != nil })
		msg := strings.TrimPrefix(*stateOf(t, store.Store, id).LastError, "publisher panicked: ")
		if len(msg) > 256 || !strings.HasPrefix(msg, "éé") || strings.ContainsRune(msg, '\uFFFD') {
			t.Fatalf("panic value kept %d bytes (%q...), want ≤ 256 on a rune boundary", len(msg), msg[:10])
		}
	})
}

func TestMaxAttemptsGoesDead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newFaultStore()
		id := enqueue(t, store.Store, 1)[0]
		s := testSettings()
		s.Retry = outbox.ExponentialBackoff{Base: time.Second, Max: 10 * time.Second, Multiplier: 2, Jitter: 0.2, MaxAttempts: 4}
		m := newCountingMetrics()
		pub := newFakePublisher(func(context.Context, *reliar.SerializedEnvelope) error { return errTransient })
		d, _ := outbox.New(store, pub, s, outbox.WithMetrics(m))
		runUntil(t, d, func() bool { st, _ := store.Inspect(id); return st.DeadAt != nil })
		st := stateOf(t, store.Store, id)
		if *st.DeadReason != string(outbox.DeadMaxAttempts) || st.Attempts != 4 {
			t.Fatalf("reason %q after %d attempts, want max_attempts after 4", *st.DeadReason, st.Attempts)
		}
		if c := m.snapshot(); c.retried != 3 || c.dead[outbox.DeadMaxAttempts] != 1 {
			t.Fatalf("metrics: retried %d dead %v", c.retried, c.dead)
		}
	})
}

// batchPublisher is a BatchPublisher whose PublishBatch calls are recorded.
type batchPublisher struct {
	*fakePublisher
	mu      sync.Mutex
	batches []int
	batchFn func(ctx context.Context, envs []*reliar.SerializedEnvelope) []error
}

func (b *batchPublisher) PublishBatch(ctx context.Context, envs []*reliar.SerializedEnvelope) []error {
	b.mu.Lock()
	b.batches = append(b.batches, len(envs))
	fn := b.batchFn
	b.mu.Unlock()
	if fn != nil {
		return fn(ctx, envs)
	}
	errs := make([]error, len(envs))
	for i, env := range envs {
		errs[i] = b.Publish(ctx, env)
	}
	return errs
}

func TestBatchPublisherReceivesWholeClaims(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newFaultStore()
		ids := enqueue(t, store.Store, 40)
		bp := &batchPublisher{fakePublisher: newFakePublisher(nil)}
		s := testSettings()
		s.BatchSize, s.MaxInFlight = 10, 20
		d, _ := outbox.New(store, bp, s)
		runUntil(t, d, func() bool { return bp.deliveredCount() == len(ids) })
		bp.mu.Lock()
		defer bp.mu.Unlock()
		if len(bp.batches) != 4 {
			t.Fatalf("batches %v, want 4 of 10", bp.batches)
		}
		for _, n := range bp.batches {
			if n != 10 {
				t.Fatalf("batches %v, want whole claims of 10", bp.batches)
			}
		}
	})
}

func TestBatchResultsApplyPerRow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newFaultStore()
		ids := enqueue(t, store.Store, 3)
		bp := &batchPublisher{fakePublisher: newFakePublisher(nil)}
		bp.batchFn = func(_ context.Context, envs []*reliar.SerializedEnvelope) []error {
			errs := make([]error, len(envs))
			for i, env := range envs {
				if env.ID == ids[2] {
					errs[i] = reliar.Permanent(errors.New("rejected"))
				}
			}
			return errs
		}
		d, _ := outbox.New(store, bp, testSettings())
		runUntil(t, d, func() bool {
			a, _ := store.Inspect(ids[0])
			c, _ := store.Inspect(ids[2])
			return a.PublishedAt != nil && c.DeadAt != nil
		})
		if st := stateOf(t, store.Store, ids[1]); st.PublishedAt == nil {
			t.Fatal("second row not published")
		}
	})
}

func TestBatchWithWrongResultCountIsTransient(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newFaultStore()
		ids := enqueue(t, store.Store, 2)
		bp := &batchPublisher{fakePublisher: newFakePublisher(nil)}
		bp.batchFn = func(context.Context, []*reliar.SerializedEnvelope) []error { return nil }
		d, _ := outbox.New(store, bp, testSettings())
		runUntil(t, d, func() bool { st, _ := store.Inspect(ids[0]); return st.Attempts == 1 && st.LockedBy == nil })
		for _, id := range ids {
			st := stateOf(t, store.Store, id)
			if st.DeadAt != nil || st.PublishedAt != nil || !strings.Contains(*st.LastError, "returned 0 results for 2") {
				t.Fatalf("row %s: %+v", id, st)
			}
		}
	})
}

func TestPanicInBatchRepublishesOneAtATime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newFaultStore()
		ids := enqueue(t, store.Store, 4)
		culprit := ids[2]
		bp := &batchPublisher{fakePublisher: newFakePublisher(func(_ context.Context, env *reliar.SerializedEnvelope) error {
			if env.ID == culprit {
				panic("bad message")
			}
			return nil
		})}
		bp.batchFn = func(ctx context.Context, envs []*reliar.SerializedEnvelope) []error {
			for _, env := range envs {
				if env.ID == culprit {
					panic("bad batch")
				}
			}
			return make([]error, len(envs))
		}
		d, _ := outbox.New(store, bp, testSettings())
		runUntil(t, d, func() bool { st, _ := store.Inspect(culprit); return st.DeadAt != nil && bp.deliveredCount() == 3 })
		if st := stateOf(t, store.Store, culprit); *st.LastError != "publisher panicked: bad message" {
			t.Fatalf("culprit last_error %q", *st.LastError)
		}
		for _, id := range ids {
			if id != culprit && stateOf(t, store.Store, id).PublishedAt == nil {
				t.Fatalf("innocent row %s not published", id)
			}
		}
	})
}
