package sqlitestore_test

import (
	"bytes"
	"context"
	"database/sql"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reliar/reliar/outbox/outboxdriver"
	"github.com/reliar/reliar/store/sqlitestore"
)

// quiet is how long a test waits to be sure no wake-up comes.
const quiet = 100 * time.Millisecond

// wakeups starts s's watcher for the test and stops it, waiting for its
// channel to close, when the test ends.
func wakeups(t *testing.T, s *sqlitestore.Store) <-chan struct{} {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	ch, err := s.Wakeups(ctx)
	if err != nil {
		cancel()
		t.Fatalf("Wakeups: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		for range ch {
		}
	})
	return ch
}

// expectWake fails the test unless a wake-up arrives (want) or stays away
// (!want) within a while.
func expectWake(t *testing.T, ch <-chan struct{}, want bool, why string) {
	t.Helper()
	wait := quiet
	if want {
		wait = 10 * time.Second
	}
	select {
	case <-ch:
		if !want {
			t.Fatalf("woken up by %s", why)
		}
	case <-time.After(wait):
		if want {
			t.Fatalf("no wake-up after %s", why)
		}
	}
}

// Only committed enqueues wake the watcher, whichever handle or process
// commits them; other commits do not.
func TestWakeupsOnlyForCommittedEnqueues(t *testing.T) {
	ctx := t.Context()
	db, path := newDB(t)
	s, err := sqlitestore.New(ctx, db, sqlitestore.WithWakeupInterval(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	other, err := sqlitestore.New(ctx, openDB(t, path)) // as another process would
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `CREATE TABLE business (v TEXT)`); err != nil {
		t.Fatal(err)
	}
	ch := wakeups(t, s)

	steps := []struct {
		name string
		do   func() error
		wake bool
	}{
		{"an enqueue", func() error { return enqueue(ctx, s, newMsgs(1)...) }, true},
		{"an enqueue through another handle", func() error { return enqueue(ctx, other, newMsgs(2)...) }, true},
		{"a business write", func() error {
			_, err := db.ExecContext(ctx, `INSERT INTO business (v) VALUES ('x')`)
			return err
		}, false},
		{"a rolled-back enqueue", func() error {
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				return err
			}
			if _, err := s.Enqueue(ctx, tx, newMsgs(1)...); err != nil {
				return err
			}
			return tx.Rollback()
		}, false},
		{"a claim and its outcome", func() error {
			b, err := s.Acquire(ctx, outboxdriver.AcquireRequest{Worker: "w", BatchSize: 10, Lease: time.Minute})
			if err != nil {
				return err
			}
			leases := make([]outboxdriver.Lease, len(b.Records))
			for i, r := range b.Records {
				leases[i] = r.Lease()
			}
			_, err = s.Complete(ctx, leases)
			return err
		}, false},
		{"an enqueue after all that", func() error { return enqueue(ctx, other, newMsgs(1)...) }, true},
	}
	for _, step := range steps {
		if err := step.do(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		expectWake(t, ch, step.wake, step.name)
	}
}

// Signals coalesce: enqueues while nobody reads leave one pending wake-up,
// and never stall the watcher.
func TestWakeupsCoalesce(t *testing.T) {
	ctx := t.Context()
	db, _ := newDB(t)
	s, err := sqlitestore.New(ctx, db, sqlitestore.WithWakeupInterval(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	ch := wakeups(t, s)
	for range 5 {
		if err := enqueue(ctx, s, newMsgs(1)...); err != nil {
			t.Fatal(err)
		}
		time.Sleep(3 * time.Millisecond)
	}
	if len(ch) != 1 || cap(ch) != 1 {
		// The watcher may not have looked yet; it must at least signal.
		expectWake(t, ch, true, "five enqueues")
	} else {
		<-ch
	}
	if err := enqueue(ctx, s, newMsgs(1)...); err != nil {
		t.Fatal(err)
	}
	expectWake(t, ch, true, "an enqueue after the coalesced ones")
}

// lockedBuffer is a log sink safe for the watcher's goroutine.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// A watcher that cannot read warns once, keeps its channel open until its
// context ends, and wakes again once the table is back.
func TestWakeupsSurviveReadErrors(t *testing.T) {
	ctx := t.Context()
	db, _ := newDB(t)
	var logs lockedBuffer
	s, err := sqlitestore.New(ctx, db, sqlitestore.WithWakeupInterval(time.Millisecond),
		sqlitestore.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	if err != nil {
		t.Fatal(err)
	}
	ch := wakeups(t, s)
	if _, err := db.ExecContext(ctx, `ALTER TABLE outbox RENAME TO outbox_away`); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(logs.String(), "wake-up watcher cannot read") {
		if time.Now().After(deadline) {
			t.Fatal("no warning from a watcher that cannot read")
		}
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond) // more failed looks
	if n := strings.Count(logs.String(), "wake-up watcher cannot read"); n != 1 {
		t.Fatalf("%d warnings, want 1 per failure streak", n)
	}
	if _, err := db.ExecContext(ctx, `ALTER TABLE outbox_away RENAME TO outbox`); err != nil {
		t.Fatal(err)
	}
	if err := enqueue(ctx, s, newMsgs(1)...); err != nil {
		t.Fatal(err)
	}
	expectWake(t, ch, true, "an enqueue once the table is back")
}

// The watcher's connection is its own: a handle that allows a single
// connection still enqueues, and still wakes the dispatcher.
func TestWakeupsWithASingleConnectionPool(t *testing.T) {
	ctx := t.Context()
	db, _ := newDB(t)
	db.SetMaxOpenConns(1)
	s, err := sqlitestore.New(ctx, db, sqlitestore.WithWakeupInterval(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	ch := wakeups(t, s)
	enqueued := make(chan error, 1)
	go func() { enqueued <- enqueue(ctx, s, newMsgs(1)...) }()
	select {
	case err := <-enqueued:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("enqueue starved of its only connection")
	}
	expectWake(t, ch, true, "an enqueue on a single-connection handle")
}

func TestWakeupsFailWithoutTheDatabase(t *testing.T) {
	ctx := t.Context()
	tests := []struct {
		name  string
		store func(t *testing.T) *sqlitestore.Store
	}{
		{"no outbox table", func(t *testing.T) *sqlitestore.Store {
			s := newStore(t)
			if _, err := s.DB().Exec(`DROP TABLE outbox`); err != nil {
				t.Fatal(err)
			}
			return s
		}},
		{"closed handle", func(t *testing.T) *sqlitestore.Store {
			s := newStore(t)
			s.DB().Close()
			return s
		}},
		{"database in memory", func(t *testing.T) *sqlitestore.Store {
			db, err := sql.Open(sqlitestore.DriverName, ":memory:")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			db.SetMaxOpenConns(1)
			if err := sqlitestore.Migrate(ctx, db); err != nil {
				t.Fatal(err)
			}
			s, err := sqlitestore.New(ctx, db)
			if err != nil {
				t.Fatal(err)
			}
			return s
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if ch, err := tt.store(t).Wakeups(ctx); err == nil {
				t.Fatalf("Wakeups succeeded (%v)", ch)
			}
		})
	}
}
