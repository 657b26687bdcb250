package outbox_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

func TestBrokerDownThirtyMinutesDeadLettersNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newFaultStore()
		ids := enqueue(t, store.Store, 100)
		s := testSettings()
		s.BreakerThreshold = 20
		m := newCountingMetrics()
		start := time.Now()
		outage := 30 * time.Minute
		pub := newFakePublisher(func(context.Context, *reliar.SerializedEnvelope) error {
			if time.Since(start) < outage {
				return errTransient
			}
			return nil
		})
		d, _ := outbox.New(store, pub, s, outbox.WithMetrics(m))
		var sawOpen bool
		runUntil(t, d, func() bool {
			sawOpen = sawOpen || d.Health().BreakerOpen
			return pub.deliveredCount() == len(ids)
		})
		if took := time.Since(start); took > outage+10*time.Minute {
			t.Fatalf("recovery took %v after a %v outage", took-outage, outage)
		}
		c := m.snapshot()
		if len(c.dead) != 0 {
			t.Fatalf("rows dead-lettered during the outage: %v", c.dead)
		}
		if !sawOpen || len(c.breaker) < 2 || !c.breaker[0] || c.breaker[len(c.breaker)-1] {
			t.Fatalf("breaker transitions %v, want it to open and close again", c.breaker)
		}
		maxAttempts := 0
		for _, id := range ids {
			st := stateOf(t, store.Store, id)
			if st.DeadAt != nil || st.PublishedAt == nil {
				t.Fatalf("row %s: %+v", id, st)
			}
			maxAttempts = max(maxAttempts, st.Attempts)
		}
		if maxAttempts > 3 {
			t.Fatalf("a row recorded %d attempts during the outage; the open breaker should record none", maxAttempts)
		}
		// While open, the dispatcher probed one row at a time.
		for _, c := range store.callsOf("acquire") {
			if c.at.Sub(start) > 5*time.Minute && c.at.Sub(start) < outage && c.n != 1 {
				t.Fatalf("claim of %d rows at +%v while the breaker was open, want single-row probes", c.n, c.at.Sub(start))
			}
		}
	})
}

func TestBreakerCountsDistinctRowsOnly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newFaultStore()
		id := enqueue(t, store.Store, 1)[0]
		s := testSettings()
		s.BreakerThreshold = 2
		s.Retry = outbox.ExponentialBackoff{Base: time.Second, Max: time.Second, Multiplier: 1, Jitter: outbox.Off, MaxAttempts: 5}
		pub := newFakePublisher(func(context.Context, *reliar.SerializedEnvelope) error { return errTransient })
		d, _ := outbox.New(store, pub, s)
		runUntil(t, d, func() bool { st, _ := store.Inspect(id); return st.DeadAt != nil })
		if d.Health().BreakerOpen {
			t.Fatal("one row failing repeatedly opened the breaker")
		}
	})
}

func TestBreakerDisabledWithOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newFaultStore()
		ids := enqueue(t, store.Store, 10)
		s := testSettings()
		s.BreakerThreshold = outbox.Off
		s.Retry = outbox.ExponentialBackoff{Base: time.Second, Max: time.Second, Multiplier: 1, Jitter: outbox.Off, MaxAttempts: 1}
		pub := newFakePublisher(func(context.Context, *reliar.SerializedEnvelope) error { return errTransient })
		d, _ := outbox.New(store, pub, s)
		runUntil(t, d, func() bool {
			for _, id := range ids {
				if st, _ := store.Inspect(id); st.DeadAt == nil {
					return false
				}
			}
			return true
		})
	})
}

func TestLapsedReclaimPastMaxClaimsGoesDead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newFaultStore()
		id := enqueue(t, store.Store, 1)[0]
		s := testSettings()
		s.MaxClaims = 3
		// Three holders crash in turn: each claims and lets the lease lapse.
		for range s.MaxClaims + 1 {
			b, err := store.Store.Acquire(context.Background(), outboxdriver.AcquireRequest{Worker: "crashy", BatchSize: 1, Lease: time.Second, MaxClaims: s.MaxClaims})
			if err != nil || len(b.Records) != 1 {
				t.Fatalf("crashing claim: %+v %v", b, err)
			}
			time.Sleep(2 * time.Second)
		}
		m := newCountingMetrics()
		pub := newFakePublisher(nil)
		d, _ := outbox.New(store, pub, s, outbox.WithMetrics(m))
		runUntil(t, d, func() bool { st, _ := store.Inspect(id); return st.DeadAt != nil })
		st := stateOf(t, store.Store, id)
		if *st.DeadReason != string(outbox.DeadMaxClaims) || st.LockedBy != nil {
			t.Fatalf("row after %d lapsed claims: %+v", s.MaxClaims, st)
		}
		if pub.calls != 0 || m.snapshot().dead[outbox.DeadMaxClaims] != 1 {
			t.Fatalf("publishes %d, dead metric %v", pub.calls, m.snapshot().dead)
		}
	})
}
