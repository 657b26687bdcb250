package outbox_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox"
)

// eventLog records events by kind.
type eventLog struct {
	mu     sync.Mutex
	byKind map[outbox.EventKind][]reliar.MessageID
	counts map[outbox.EventKind]int
}

func newEventLog() *eventLog {
	return &eventLog{byKind: map[outbox.EventKind][]reliar.MessageID{}, counts: map[outbox.EventKind]int{}}
}

func (e *eventLog) Event(ev outbox.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.byKind[ev.Kind] = append(e.byKind[ev.Kind], ev.IDs...)
	e.counts[ev.Kind] += ev.Count
	if ev.Worker == "" || ev.At.IsZero() {
		panic("event without worker or time")
	}
}

func (e *eventLog) ids(k outbox.EventKind) []reliar.MessageID {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.byKind[k])
}

func sameIDs(a, b []reliar.MessageID) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	cmp := func(x, y reliar.MessageID) int { return slices.Compare(x[:], y[:]) }
	slices.SortFunc(a, cmp)
	slices.SortFunc(b, cmp)
	return slices.Equal(a, b)
}

func TestEventsOfAHealthyRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newFaultStore()
		ids := enqueue(t, store.Store, 5)
		ev := newEventLog()
		pub := newFakePublisher(func(_ context.Context, env *reliar.SerializedEnvelope) error {
			if env.ID == ids[4] {
				return errTransient
			}
			return nil
		})
		d, _ := outbox.New(store, pub, testSettings(), outbox.WithEvents(ev))
		runUntil(t, d, func() bool { return len(ev.ids(outbox.EventCompleted)) == 4 && len(ev.ids(outbox.EventFailed)) == 1 })
		for kind, want := range map[outbox.EventKind][]reliar.MessageID{
			outbox.EventClaimed:       ids,
			outbox.EventPublished:     ids[:4],
			outbox.EventPublishFailed: ids[4:],
			outbox.EventCompleted:     ids[:4],
			outbox.EventFailed:        ids[4:],
		} {
			if got := ev.ids(kind); !sameIDs(got, want) {
				t.Errorf("%s: got %d ids, want %d", kind, len(got), len(want))
			}
		}
	})
}

func TestEventsAttributeTheDuplicateWindows(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newFaultStore()
		ids := enqueue(t, store.Store, 2)
		store.hook("complete", hang)
		s := testSettings()
		ev := newEventLog()
		// Row 0 publishes and its completion hangs (left to its lease at
		// the drain); row 1 hangs in the publisher (cut off at the drain).
		pub := newFakePublisher(func(ctx context.Context, env *reliar.SerializedEnvelope) error {
			if env.ID == ids[1] {
				<-ctx.Done()
				return ctx.Err()
			}
			return nil
		})
		s.PublishTimeout = 25 * time.Second
		d, _ := outbox.New(store, pub, s, outbox.WithEvents(ev))
		stop, _ := running(t, d)
		time.Sleep(time.Second)
		stop()
		if got := ev.ids(outbox.EventDrainCutOff); !sameIDs(got, ids[1:]) {
			t.Errorf("cut off %v, want row 1", got)
		}
		if got := ev.ids(outbox.EventReleased); !sameIDs(got, ids[1:]) {
			t.Errorf("released %v, want row 1", got)
		}
		if got := ev.ids(outbox.EventLeftToLease); !sameIDs(got, ids[:1]) {
			t.Errorf("left to lease %v, want row 0", got)
		}
		if len(ev.ids(outbox.EventOutcomeWriteFailed)) == 0 {
			t.Error("no outcome_write_failed event")
		}

		// A new dispatcher reclaims row 0 after its lease: a reclaimed event.
		time.Sleep(s.Lease)
		ev2 := newEventLog()
		store.hook("complete", nil)
		d2, _ := outbox.New(store, newFakePublisher(nil), s, outbox.WithEvents(ev2))
		runUntil(t, d2, func() bool { return len(ev2.ids(outbox.EventCompleted)) == 2 })
		if got := ev2.ids(outbox.EventReclaimed); !sameIDs(got, ids[:1]) {
			t.Errorf("reclaimed %v, want row 0", got)
		}
	})
}

func TestAbandonedAndShortfallEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newFaultStore()
		ids := enqueue(t, store.Store, 1)
		store.hook("complete", func(context.Context, int) error { return errTransient })
		ev := newEventLog()
		d, _ := outbox.New(store, newFakePublisher(nil), testSettings(), outbox.WithEvents(ev))
		runUntil(t, d, func() bool { return len(ev.ids(outbox.EventAbandoned)) == 1 })
		if got := ev.ids(outbox.EventAbandoned); !sameIDs(got, ids) {
			t.Fatalf("abandoned %v", got)
		}
	})
}
