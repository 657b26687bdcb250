package outbox_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox"
)

func TestShutdownCutsOffHungPublishesWithinDrainTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newFaultStore()
		ids := enqueue(t, store.Store, 5)
		s := testSettings()
		s.PublishTimeout = 25 * time.Second // longer than the drain
		m := newCountingMetrics()
		pub := newFakePublisher(func(ctx context.Context, _ *reliar.SerializedEnvelope) error {
			<-ctx.Done()
			return ctx.Err()
		})
		d, _ := outbox.New(store, pub, s, outbox.WithMetrics(m))
		stop, _ := running(t, d)
		time.Sleep(time.Second)
		err, took := stop()
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		cutoff := s.DrainTimeout - min(s.StoreTimeout, s.DrainTimeout/2)
		if took != cutoff {
			t.Fatalf("shutdown took %v, want the publish cut-off %v (within DrainTimeout %v)", took, cutoff, s.DrainTimeout)
		}
		for _, id := range ids {
			st := stateOf(t, store.Store, id)
			if st.LockedBy != nil || st.Attempts != 0 || st.LastError != nil {
				t.Fatalf("cut-off row not released without an attempt: %+v", st)
			}
		}
		if got := m.snapshot().released; got != len(ids) {
			t.Fatalf("released-at-drain metric %d, want %d", got, len(ids))
		}
	})
}

func TestShutdownWritesOutcomesThatResolveInTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newFaultStore()
		ids := enqueue(t, store.Store, 4)
		s := testSettings()
		pub := newFakePublisher(func(ctx context.Context, env *reliar.SerializedEnvelope) error {
			time.Sleep(3 * time.Second)
			if env.ID == ids[3] {
				return errTransient
			}
			return nil
		})
		d, _ := outbox.New(store, pub, s)
		stop, _ := running(t, d)
		time.Sleep(time.Second)
		err, took := stop()
		if err != nil || took != 2*time.Second {
			t.Fatalf("Run = %v after %v; want nil once the running publishes resolve (2s)", err, took)
		}
		for _, id := range ids[:3] {
			if st := stateOf(t, store.Store, id); st.PublishedAt == nil {
				t.Fatalf("row resolved during the drain not completed: %+v", st)
			}
		}
		if st := stateOf(t, store.Store, ids[3]); st.Attempts != 1 || st.LastError == nil || st.LockedBy != nil {
			t.Fatalf("failure resolved during the drain not recorded: %+v", st)
		}
	})
}

func TestShutdownReleasesRowsClaimedWhileCancelling(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newFaultStore()
		ids := enqueue(t, store.Store, 3)
		store.hook("acquire", func(ctx context.Context, _ int) error {
			time.Sleep(time.Second)
			return nil
		})
		pub := newFakePublisher(nil)
		d, _ := outbox.New(store, pub, testSettings())
		stop, _ := running(t, d)
		time.Sleep(500 * time.Millisecond)
		if err, _ := stop(); err != nil {
			t.Fatalf("Run: %v", err)
		}
		if pub.calls != 0 {
			t.Fatalf("%d publishes started after cancellation", pub.calls)
		}
		for _, id := range ids {
			if st := stateOf(t, store.Store, id); st.LockedBy != nil || st.ClaimCount != 1 {
				t.Fatalf("row claimed during cancellation not released: %+v", st)
			}
		}
	})
}

func TestShutdownLeavesPublishedButUncompletedRowsToTheirLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newFaultStore()
		id := enqueue(t, store.Store, 1)[0]
		store.hook("complete", hang)
		s := testSettings()
		pub := newFakePublisher(nil)
		d, _ := outbox.New(store, pub, s)
		stop, _ := running(t, d)
		time.Sleep(time.Second)
		err, took := stop()
		if err != nil || took > s.DrainTimeout {
			t.Fatalf("Run = %v after %v, want nil within DrainTimeout %v", err, took, s.DrainTimeout)
		}
		st := stateOf(t, store.Store, id)
		if st.LockedBy == nil || st.PublishedAt != nil {
			t.Fatalf("published row with an unwritten completion was released (a certain duplicate): %+v", st)
		}
		if n := len(store.callsOf("release")); n != 0 {
			t.Fatalf("%d release calls, want none", n)
		}
	})
}

func TestShutdownRenewsLeasesUntilTheDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newFaultStore()
		enqueue(t, store.Store, 1)
		s := testSettings()
		s.Lease, s.PublishTimeout, s.StoreTimeout, s.DrainTimeout = 8*time.Second, 7*time.Second, 2*time.Second, 6*time.Second
		pub := newFakePublisher(sleepPublish(5 * time.Second))
		d, _ := outbox.New(store, pub, s)
		start := time.Now()
		stop, _ := running(t, d)
		time.Sleep(time.Second) // cancel at 1s; D at 7s; the tick at 4s falls in the drain
		stop()
		var inDrain bool
		for _, c := range store.callsOf("extend") {
			inDrain = inDrain || c.at.Equal(start.Add(4*time.Second))
		}
		if !inDrain {
			t.Fatal("no lease renewal during the drain")
		}
		if pub.deliveredCount() != 1 {
			t.Fatal("publish running at cancellation did not finish")
		}
	})
}

func TestPermanentErrorMetDuringDrainIsReturned(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newFaultStore()
		enqueue(t, store.Store, 1)
		store.hook("complete", func(context.Context, int) error { return errMissingTable })
		s := testSettings()
		pub := newFakePublisher(sleepPublish(2 * time.Second))
		d, _ := outbox.New(store, pub, s)
		stop, _ := running(t, d)
		time.Sleep(time.Second)
		err, took := stop()
		if !errors.Is(err, errMissingTable) {
			t.Fatalf("Run = %v, want the permanent error met during the drain", err)
		}
		if took > s.DrainTimeout {
			t.Fatalf("Run returned after %v, want within DrainTimeout", took)
		}
	})
}
