package sqlitestore_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/reliar/reliar/store/sqlitestore"
)

// openFiles counts the descriptors of this process open on path.
func openFiles(t *testing.T, path string) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	want, err := filepath.EvalSymlinks(path)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && target == want {
			n++
		}
	}
	return n
}

// TestWakeupsShareOneWatcher: many dispatchers of one process subscribe to
// one store; one watcher connection serves them all, each subscriber hears
// every committed enqueue, and the watcher goes with the last of them.
func TestWakeupsShareOneWatcher(t *testing.T) {
	db, path := newDB(t)
	s, err := sqlitestore.New(t.Context(), db, sqlitestore.WithWakeupInterval(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(t.Context(), `SELECT 1`); err != nil {
		t.Fatal(err)
	}
	before := openFiles(t, path)
	// One round of subscribers: returns the watcher descriptors seen while
	// they ran.
	round := func() int {
		const subscribers = 30
		var (
			chans   []<-chan struct{}
			cancels []context.CancelFunc
		)
		for range subscribers {
			ctx, cancel := context.WithCancel(t.Context())
			ch, err := s.Wakeups(ctx)
			if err != nil {
				cancel()
				t.Fatal(err)
			}
			chans, cancels = append(chans, ch), append(cancels, cancel)
		}
		during := openFiles(t, path) - before
		if err := enqueue(t.Context(), s, newMsgs(1)...); err != nil {
			t.Fatal(err)
		}
		for _, ch := range chans {
			expectWake(t, ch, true, "a committed enqueue")
		}
		for i, cancel := range cancels {
			cancel()
			for range chans[i] {
			}
		}
		return during
	}
	if got := round(); got > 1 {
		t.Fatalf("%d watcher connections for 30 subscribers, want 1", got)
	}
	// SQLite keeps the descriptor of a closed connection for reuse while
	// another connection of the process holds a lock on the file, so the
	// count after the watcher stopped may be one above the start; it must
	// not grow with every round.
	after := openFiles(t, path)
	if after > before+1 {
		t.Fatalf("%d descriptors on the file after the last subscriber left, %d before", after, before)
	}
	if got := round(); got > 1 {
		t.Fatalf("%d watcher connections in the second round, want 1", got)
	}
	if again := openFiles(t, path); again > after {
		t.Fatalf("%d descriptors after the second round, %d after the first: the watcher leaks", again, after)
	}
	ch := wakeups(t, s)
	if err := enqueue(t.Context(), s, newMsgs(1)...); err != nil {
		t.Fatal(err)
	}
	expectWake(t, ch, true, "an enqueue after a new subscriber")
}
