package outbox_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

func TestFailedCompleteKeepsRowsOutstandingAndIsPaced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newFaultStore()
		ids := enqueue(t, store.Store, 10)
		store.hook("complete", failTimes(5, errTransient))
		s := testSettings()
		s.BatchSize, s.MaxInFlight = 4, 4
		s.PollInterval = 200 * time.Millisecond
		pub := newFakePublisher(nil)
		d, _ := outbox.New(store, pub, s)
		runUntil(t, d, func() bool {
			for _, id := range ids {
				if st, _ := store.Inspect(id); st.PublishedAt == nil {
					return false
				}
			}
			return true
		})
		calls := store.callsOf("complete")
		pace := min(s.PollInterval, s.Lease/4)
		for i := 1; i <= 5; i++ {
			if gap := calls[i].at.Sub(calls[i-1].at); gap < pace {
				t.Fatalf("write %d followed a failed one after %v, want at least %v", i, gap, pace)
			}
		}
		// While the first four rows' outcome stayed unwritten, they filled
		// MaxInFlight: no claim happened in between.
		claims := store.callsOf("acquire")
		if len(claims) < 2 || claims[1].at.Before(calls[5].done) {
			t.Fatalf("a claim at +%v came before the held rows' outcome landed at +%v", claims[1].at.Sub(claims[0].at), calls[5].done.Sub(claims[0].at))
		}
		if pub.deliveredCount() != 10 {
			t.Fatalf("delivered %d", pub.deliveredCount())
		}
	})
}

func TestFreshOutcomesAreWrittenAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newFaultStore()
		enqueue(t, store.Store, 3)
		s := testSettings()
		s.MaxInFlight = 1
		d, _ := outbox.New(store, newFakePublisher(sleepPublish(time.Millisecond)), s)
		start := time.Now()
		runUntil(t, d, func() bool { return len(store.callsOf("complete")) == 3 })
		for i, c := range store.callsOf("complete") {
			if want := start.Add(time.Duration(i+1) * time.Millisecond); !c.at.Equal(want) {
				t.Fatalf("complete %d at +%v, want +%v (right after its publish)", i, c.at.Sub(start), want.Sub(start))
			}
		}
	})
}

func TestUnwritableOutcomeIsAbandonedAfterOneLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newFaultStore()
		ids := enqueue(t, store.Store, 2)
		store.hook("complete", func(context.Context, int) error { return errTransient })
		s := testSettings()
		s.MaxInFlight, s.BatchSize = 2, 2
		m := newCountingMetrics()
		pub := newFakePublisher(nil)
		d, _ := outbox.New(store, pub, s, outbox.WithMetrics(m))
		start := time.Now()
		stop, _ := running(t, d)
		for m.snapshot().abandoned < 2 {
			time.Sleep(10 * time.Millisecond)
		}
		if took := time.Since(start); took < s.Lease || took > s.Lease+time.Second {
			t.Fatalf("abandoned after %v, want about one Lease (%v)", took, s.Lease)
		}
		// Abandoned rows no longer count: the dispatcher claims again, and
		// once the lease lapses it reclaims (and republishes) them.
		time.Sleep(s.Lease)
		stop()
		if got := stateOf(t, store.Store, ids[0]).LapsedClaims; got < 1 {
			t.Fatalf("abandoned row was not reclaimed after its lease: lapsed_claims %d", got)
		}
	})
}

var errMissingTable = reliar.Permanent(errors.New(`relation "outbox" does not exist`))

func TestPermanentWriteErrorEndsRunAfterDrain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newFaultStore()
		enqueue(t, store.Store, 3)
		store.hook("complete", func(context.Context, int) error { return errMissingTable })
		s := testSettings()
		d, _ := outbox.New(store, newFakePublisher(nil), s)
		start := time.Now()
		err := d.Run(context.Background())
		if !errors.Is(err, errMissingTable) {
			t.Fatalf("Run = %v, want the permanent write error", err)
		}
		if took := time.Since(start); took > s.DrainTimeout {
			t.Fatalf("Run took %v, want within DrainTimeout", took)
		}
		if n := len(store.callsOf("acquire")); n != 1 {
			t.Fatalf("%d claims after a permanent error, want none after the first", n)
		}
	})
}

func TestPermanentAcquireErrorEndsRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newFaultStore()
		store.hook("acquire", func(context.Context, int) error { return errMissingTable })
		d, _ := outbox.New(store, newFakePublisher(nil), testSettings())
		if err := d.Run(context.Background()); !errors.Is(err, errMissingTable) {
			t.Fatalf("Run = %v, want the permanent claim error", err)
		}
	})
}

func TestRenewalLandsWhileCompleteHangs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newFaultStore()
		id := enqueue(t, store.Store, 1)[0]
		store.hook("complete", hang)
		s := testSettings()
		s.Lease, s.PublishTimeout, s.StoreTimeout, s.DrainTimeout = 60*time.Second, 2*time.Second, 25*time.Second, 30*time.Second
		d, _ := outbox.New(store, newFakePublisher(nil), s)
		start := time.Now()
		stop, _ := running(t, d)
		time.Sleep(s.Lease - time.Second)
		stop()
		// Completes hang 0–25s and 25–50s; the renewal tick at 30s must not
		// wait for the write in flight.
		if n := len(store.callsOf("complete")); n < 2 {
			t.Fatalf("%d complete calls, want the write retried while hanging", n)
		}
		extends := store.callsOf("extend")
		if len(extends) == 0 {
			t.Fatal("no renewal while the outcome write hung")
		}
		tick := start.Add(s.Lease / 2)
		if c := extends[0]; !c.at.Equal(tick) || c.done.Sub(tick) > s.StoreTimeout {
			t.Fatalf("renewal started +%v, landed +%v; want at its tick +%v, within StoreTimeout", c.at.Sub(start), c.done.Sub(start), tick.Sub(start))
		}
		if st := stateOf(t, store.Store, id); st.LapsedClaims != 0 || st.ClaimCount != 1 {
			t.Fatalf("the lease lapsed while renewed: %+v", st)
		}
	})
}

func TestStaleOutcomeAfterLeaseLossIsFenced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newFaultStore()
		id := enqueue(t, store.Store, 1)[0]
		s := testSettings()
		s.Lease, s.PublishTimeout, s.StoreTimeout, s.DrainTimeout = 10*time.Second, 2*time.Second, 4*time.Second, 5*time.Second
		s.MaxInFlight, s.BatchSize = 1, 1 // the held row keeps this dispatcher from reclaiming it
		start := time.Now()
		// Renewals fail and completes fail until 10.6s, so the lease lapses
		// (at 10s) before the outcome lands; another worker reclaims at
		// 10.5s. The publish resolved at 1.9s, so the dispatcher still
		// retries its write until 11.9s.
		store.hook("extend", func(context.Context, int) error { return errTransient })
		store.hook("complete", func(ctx context.Context, _ int) error {
			if time.Since(start) < 10600*time.Millisecond {
				return errTransient
			}
			return nil
		})
		d, _ := outbox.New(store, newFakePublisher(sleepPublish(1900*time.Millisecond)), s)
		stop, _ := running(t, d)
		time.Sleep(10500 * time.Millisecond)
		b, err := store.Store.Acquire(context.Background(), outboxdriver.AcquireRequest{Worker: "other", BatchSize: 1, Lease: time.Minute, MaxClaims: 5})
		if err != nil || len(b.Records) != 1 || !b.Records[0].Reclaimed {
			t.Fatalf("other worker's reclaim: %+v, %v", b, err)
		}
		time.Sleep(3 * time.Second)
		stop()
		var landed bool
		for _, c := range store.callsOf("complete") {
			landed = landed || c.at.Sub(start) >= 10600*time.Millisecond
		}
		if !landed {
			t.Fatal("the stale outcome was never written")
		}
		st := stateOf(t, store.Store, id)
		if st.PublishedAt != nil || st.LockedBy == nil || *st.LockedBy != "other" || st.Attempts != 0 {
			t.Fatalf("stale outcome changed the reclaimed row: published %v locked_by %v attempts %d", st.PublishedAt, st.LockedBy, st.Attempts)
		}
	})
}

func TestRunTwiceIsRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d, _ := outbox.New(newFaultStore(), newFakePublisher(nil), testSettings())
		stop, _ := running(t, d)
		time.Sleep(time.Millisecond)
		if err := d.Run(context.Background()); !errors.Is(err, outbox.ErrAlreadyRunning) {
			t.Fatalf("second Run = %v, want ErrAlreadyRunning", err)
		}
		stop()
		if err := d.Run(context.Background()); !errors.Is(err, outbox.ErrAlreadyRunning) {
			t.Fatalf("Run after the first ended = %v, want ErrAlreadyRunning", err)
		}
	})
}

func TestHealthReportsProgress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newFaultStore()
		enqueue(t, store.Store, 1)
		pub := newFakePublisher(nil)
		d, _ := outbox.New(store, pub, testSettings())
		if h := d.Health(); h.Running {
			t.Fatal("running before Run")
		}
		stop, _ := running(t, d)
		for pub.deliveredCount() < 1 {
			time.Sleep(time.Millisecond)
		}
		time.Sleep(time.Millisecond)
		h := d.Health()
		if !h.Running || h.LastClaim.IsZero() || h.LastOutcomeWrite.IsZero() || h.BreakerOpen || h.WorkerID == "" {
			t.Fatalf("health while running: %+v", h)
		}
		stop()
		if d.Health().Running {
			t.Fatal("running after Run returned")
		}
	})
}

func TestWorkerIDHasRandomSuffix(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ids := map[string]bool{}
		for range 3 {
			d, _ := outbox.New(newFaultStore(), newFakePublisher(nil), testSettings())
			stop, _ := running(t, d)
			time.Sleep(time.Millisecond)
			ids[d.Health().WorkerID] = true
			stop()
		}
		if len(ids) != 3 {
			t.Fatalf("worker ids %v, want three different ones", ids)
		}
	})
}
