package outbox_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

type recordingTracer struct {
	mu       sync.Mutex
	claims   int
	publish  []string // traceparents of the published envelopes
	outcomes map[string]int
	spanErrs int
}

type recSpan struct {
	t *recordingTracer
}

func (s recSpan) End(err error) {
	if err != nil {
		s.t.mu.Lock()
		s.t.spanErrs++
		s.t.mu.Unlock()
	}
}

func (t *recordingTracer) StartClaim(ctx context.Context, _ string, _ int) (context.Context, outbox.Span) {
	t.mu.Lock()
	t.claims++
	t.mu.Unlock()
	return ctx, recSpan{t}
}

func (t *recordingTracer) StartPublish(ctx context.Context, env *reliar.SerializedEnvelope) (context.Context, outbox.Span) {
	t.mu.Lock()
	t.publish = append(t.publish, env.Metadata.Trace.Traceparent)
	t.mu.Unlock()
	return ctx, recSpan{t}
}

func (t *recordingTracer) StartOutcomeWrite(ctx context.Context, op string, rows int) (context.Context, outbox.Span) {
	t.mu.Lock()
	if t.outcomes == nil {
		t.outcomes = map[string]int{}
	}
	t.outcomes[op] += rows
	t.mu.Unlock()
	return ctx, recSpan{t}
}

func TestTracerAndStatsHooks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newFaultStore()
		const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
		reliar.SetTraceExtractor(func(context.Context) reliar.Trace { return reliar.Trace{Traceparent: tp} })
		defer reliar.SetTraceExtractor(nil)
		enqueue(t, store.Store, 2)
		tr := &recordingTracer{}
		m := newCountingMetrics()
		s := testSettings()
		s.StatsInterval = time.Second
		pub := newFakePublisher(nil)
		d, _ := outbox.New(store, pub, s, outbox.WithTracer(tr), outbox.WithMetrics(m))
		runUntil(t, d, func() bool {
			tr.mu.Lock()
			defer tr.mu.Unlock()
			return pub.deliveredCount() == 2 && m.snapshot().stats >= 2 && tr.outcomes["complete"] == 2
		})
		tr.mu.Lock()
		defer tr.mu.Unlock()
		if tr.claims == 0 || len(tr.publish) != 2 || tr.publish[0] != tp {
			t.Fatalf("spans: claims %d publishes %v", tr.claims, tr.publish)
		}
		if tr.outcomes["complete"] != 2 {
			t.Fatalf("outcome-write spans cover %v rows, want complete: 2", tr.outcomes)
		}
	})
}

func TestLeaseShortfallIsReported(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newFaultStore()
		ids := enqueue(t, store.Store, 2)
		s := testSettings()
		s.Lease, s.PublishTimeout, s.StoreTimeout, s.DrainTimeout = 10*time.Second, 8*time.Second, 2*time.Second, 5*time.Second
		s.MaxInFlight, s.BatchSize = 2, 2 // no room to reclaim the released row before 7s
		m := newCountingMetrics()
		pub := newFakePublisher(sleepPublish(7 * time.Second))
		d, _ := outbox.New(store, pub, s, outbox.WithMetrics(m))
		stop, _ := running(t, d)
		// At 3s an operator (or a bug) clears one lease behind the
		// dispatcher's back: the renewal at 5s extends one row of two, and
		// the completion at 7s is fenced off for that row.
		time.Sleep(3 * time.Second)
		st := stateOf(t, store.Store, ids[1])
		if n, err := store.Store.Release(context.Background(), []outboxdriver.Lease{{ID: ids[1], Token: *st.LeaseToken}}); n != 1 || err != nil {
			t.Fatalf("release: %d %v", n, err)
		}
		time.Sleep(4500 * time.Millisecond) // to 7.5s
		if got := m.snapshot().shortfall; got != 1 {
			t.Fatalf("lease shortfall %d, want 1", got)
		}
		if st := stateOf(t, store.Store, ids[1]); st.PublishedAt != nil || st.Attempts != 0 {
			t.Fatalf("completion of a row whose lease was cleared landed: %+v", st)
		}
		if st := stateOf(t, store.Store, ids[0]); st.PublishedAt == nil {
			t.Fatal("the other row was not completed")
		}
		stop()
	})
}

func TestNoopHooks(t *testing.T) {
	t.Parallel()
	var m outbox.Metrics = outbox.NoopMetrics{}
	m.Claimed(1)
	m.Published("t", time.Second)
	m.PublishFailed("t", reliar.FailureTransient, time.Second)
	m.Retried(reliar.FailureTransient)
	m.Dead(outbox.DeadPermanent, 1)
	m.OutcomeWriteFailed(1)
	m.LeaseShortfall(1)
	m.Abandoned(1)
	m.ReleasedAtDrain(1)
	m.BreakerOpen(true)
	m.Stats(outbox.Stats{})
	ctx, span := outbox.NoopTracer{}.StartClaim(context.Background(), "w", 1)
	span.End(nil)
	_, span = outbox.NoopTracer{}.StartPublish(ctx, &reliar.SerializedEnvelope{})
	span.End(nil)
	if outbox.Unordered.String() != "unordered" || outbox.PerKey.String() != "per-key" || outbox.Ordering(9).String() != "Ordering(9)" {
		t.Fatal("Ordering.String")
	}
}

// windowPublisher declares a broker dedup window.
type windowPublisher struct {
	*fakePublisher
	window time.Duration
}

func (w windowPublisher) DedupWindow() time.Duration { return w.window }

func (m *countingMetrics) RedeliveryOutsideDedup(n int) {
	m.with(func(c *counts) { c.outsideDedup += n })
}

func TestRedeliveryOutsideDedupWindowIsCounted(t *testing.T) {
	for _, tt := range []struct {
		name   string
		window time.Duration
		want   int
	}{
		{"lease lost past a short window", time.Second, 1},
		{"lease lost within a long window", 2 * time.Minute, 0},
		{"broker without dedup", 0, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				store := newFaultStore()
				enqueue(t, store.Store, 1)
				// A previous holder claimed the row and lost its lease.
				if b, err := store.Store.Acquire(context.Background(), outboxdriver.AcquireRequest{Worker: "gone", BatchSize: 1, Lease: 10 * time.Second, MaxClaims: 5}); err != nil || len(b.Records) != 1 {
					t.Fatalf("claim: %v %v", b, err)
				}
				time.Sleep(11 * time.Second)
				m := newCountingMetrics()
				pub := windowPublisher{newFakePublisher(nil), tt.window}
				d, _ := outbox.New(store, pub, testSettings(), outbox.WithMetrics(m))
				runUntil(t, d, func() bool { return pub.deliveredCount() == 1 })
				if got := m.snapshot().outsideDedup; got != tt.want {
					t.Fatalf("redeliveries outside the dedup window counted %d, want %d", got, tt.want)
				}
			})
		})
	}
}

func TestBatchPublishOpensASpanPerEnvelope(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newFaultStore()
		enqueue(t, store.Store, 3)
		tr := &recordingTracer{}
		bp := &batchPublisher{fakePublisher: newFakePublisher(nil)}
		d, _ := outbox.New(store, bp, testSettings(), outbox.WithTracer(tr))
		runUntil(t, d, func() bool { return bp.deliveredCount() == 3 })
		tr.mu.Lock()
		defer tr.mu.Unlock()
		if len(tr.publish) != 3 {
			t.Fatalf("%d publish spans for a batch of 3", len(tr.publish))
		}
	})
}
