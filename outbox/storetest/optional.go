package storetest

import (
	"context"
	"slices"
	"time"

	"github.com/reliar/reliar/outbox/outboxdriver"
)

// signalWait bounds how long the suite waits for a wake-up.
const signalWait = 10 * time.Second

func optionalCases() []testCase {
	return []testCase{
		{name: "Notifier wakes up on Enqueue", needs: func(c outboxdriver.Capabilities) bool { return c.Notify }, run: notifyWakeup},
		{name: "MaintenanceLocker admits one holder at a time", needs: func(c outboxdriver.Capabilities) bool { return c.MaintenanceLock }, run: maintenanceLock},
		{name: "a claim After a position passes over the rows before it", needs: func(c outboxdriver.Capabilities) bool { return c.ClaimAfter }, run: claimAfter},
		{name: "a per-key claim After a position keeps each key's order", needs: func(c outboxdriver.Capabilities) bool { return c.ClaimAfter && c.PerKeyOrdering }, run: claimAfterPerKey},
	}
}

func notifyWakeup(f *fixture) {
	n, ok := f.h.Store.(outboxdriver.Notifier)
	if !ok {
		f.t.Fatalf("Capabilities().Notify is true but %T does not implement outboxdriver.Notifier", f.h.Store)
	}
	ctx, cancel := context.WithCancel(f.ctx)
	defer cancel()
	ch, err := n.Wakeups(ctx)
	if err != nil {
		f.t.Fatalf("Wakeups: %v", err)
	}
	f.enqueueN(2)
	select {
	case _, open := <-ch:
		if !open {
			f.t.Fatal("wake-up channel closed before its context was done")
		}
	case <-time.After(signalWait):
		f.t.Fatalf("no wake-up within %v of an Enqueue", signalWait)
	}
	cancel()
	deadline := time.After(signalWait)
	for {
		select {
		case _, open := <-ch:
			if !open {
				return
			}
		case <-deadline:
			f.t.Fatalf("wake-up channel still open %v after its context was cancelled", signalWait)
		}
	}
}

func maintenanceLock(f *fixture) {
	l, ok := f.h.Store.(outboxdriver.MaintenanceLocker)
	if !ok {
		f.t.Fatalf("Capabilities().MaintenanceLock is true but %T does not implement outboxdriver.MaintenanceLocker", f.h.Store)
	}
	lock := func(want bool, why string) func() {
		f.t.Helper()
		unlock, ok, err := l.TryLockMaintenance(f.ctx)
		if err != nil {
			f.t.Fatalf("TryLockMaintenance (%s): %v", why, err)
		}
		if ok != want {
			f.t.Fatalf("TryLockMaintenance (%s): ok = %v, want %v", why, ok, want)
		}
		if ok && unlock == nil {
			f.t.Fatalf("TryLockMaintenance (%s): ok without an unlock func", why)
		}
		return unlock
	}
	unlock := lock(true, "free lock")
	lock(false, "while held")
	unlock()
	unlock = lock(true, "after unlock")
	unlock()
}

// claimAfter: rows at or before After are passed over even when due (here
// released back behind it); the rows after it are claimed in order, and a
// claim without After finds the rows passed over.
func claimAfter(f *fixture) {
	now := f.now()
	ids := f.enqueueEach(at(now.Add(-3*time.Minute)), at(now.Add(-2*time.Minute)),
		at(now.Add(-2*time.Minute)), at(now.Add(-time.Minute)), newMsg(4), at(now.Add(time.Hour)))
	first := f.claim(2)
	if got := recordIDs(first); !slices.Equal(got, ids[:2]) {
		f.t.Fatalf("first claim: got %v, want %v", got, ids[:2])
	}
	f.affected("Release", f.release(leases(first)...), 2)
	pos := first[1].Position()
	if got := recordIDs(f.acquire(outboxdriver.AcquireRequest{After: &pos}).Records); !slices.Equal(got, ids[2:5]) {
		f.t.Fatalf("claim After the second row: got %v, want the due rows after it %v, in order", got, ids[2:5])
	}
	if got := recordIDs(f.acquire(outboxdriver.AcquireRequest{After: &pos}).Records); len(got) != 0 {
		f.t.Fatalf("claim After the second row again: got %v, want nothing (leased or scheduled)", got)
	}
	if got := recordIDs(f.claim(10)); !slices.Equal(got, ids[:2]) {
		f.t.Fatalf("claim from the head: got %v, want the released rows %v", got, ids[:2])
	}
}

// claimAfterPerKey: a key's later row after the position is not claimed
// while the key's head, before the position, is pending.
func claimAfterPerKey(f *fixture) {
	now := f.now()
	head, free, next := keyed("k"), at(now.Add(-2*time.Minute)), keyed("k")
	head.AvailableAt = now.Add(-3 * time.Minute)
	next.AvailableAt = now.Add(-time.Minute)
	ids := f.enqueueEach(head, free, next)
	pos := outboxdriver.Position{AvailableAt: f.inspect(ids[0]).AvailableAt, Sequence: f.inspect(ids[0]).Sequence}
	req := outboxdriver.AcquireRequest{Ordering: outboxdriver.PerKey, After: &pos}
	if got := recordIDs(f.acquire(req).Records); !slices.Equal(got, ids[1:2]) {
		f.t.Fatalf("per-key claim After k's head: got %v, want only the row without a key %v", got, ids[1:2])
	}
	f.wantClaim("k's head, from the head", ids[0])
}
