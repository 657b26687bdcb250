package storetest

import (
	"context"
	"time"

	"github.com/reliar/reliar/outbox/outboxdriver"
)

// signalWait bounds how long the suite waits for a wake-up.
const signalWait = 10 * time.Second

func optionalCases() []testCase {
	return []testCase{
		{name: "Notifier wakes up on Enqueue", needs: func(c outboxdriver.Capabilities) bool { return c.Notify }, run: notifyWakeup},
		{name: "MaintenanceLocker admits one holder at a time", needs: func(c outboxdriver.Capabilities) bool { return c.MaintenanceLock }, run: maintenanceLock},
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
