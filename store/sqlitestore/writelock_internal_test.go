package sqlitestore

import (
	"context"
	"os"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// Waiters get the lock in the order they came, the urgent ones before every
// normal one, and a wait ends with its context.
func TestWriteLockOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var l writeLock
		ctx := context.Background()
		if err := l.lock(ctx, false); err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		var order []string
		var wg sync.WaitGroup
		start := func(name string, urgent bool) {
			wg.Go(func() {
				if err := l.lock(ctx, urgent); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				order = append(order, name)
				mu.Unlock()
				l.unlock()
			})
			synctest.Wait() // name is queued before the next one starts
		}
		start("n1", false)
		start("n2", false)
		start("u1", true)
		start("n3", false)
		start("u2", true)
		cancelled, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		gaveUp := make(chan error, 1)
		go func() { gaveUp <- l.lock(cancelled, false) }()
		time.Sleep(2 * time.Second)
		if err := <-gaveUp; err == nil {
			t.Fatal("a wait whose context ended got the lock")
		}
		l.unlock()
		wg.Wait()
		want := []string{"u1", "u2", "n1", "n2", "n3"}
		if len(order) != len(want) {
			t.Fatalf("order %v, want %v", order, want)
		}
		for i := range want {
			if order[i] != want[i] {
				t.Fatalf("order %v, want %v", order, want)
			}
		}
		if err := l.lock(ctx, false); err != nil || !l.held {
			t.Fatalf("the lock is not free after everyone: %v", err)
		}
	})
}

// A handle opened by Open queues its writers in Go: many goroutines
// committing at once never fail with SQLITE_BUSY, even with SQLite's busy
// handler shortened to nothing, and a transaction whose connection is lost
// releases its place.
func TestOpenQueuesWriters(t *testing.T) {
	db, err := Open(t.TempDir() + "/queue.db")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(8)
	db.SetMaxIdleConns(8)
	ctx := t.Context()
	if _, err := db.ExecContext(ctx, `CREATE TABLE t (n INTEGER)`); err != nil {
		t.Fatal(err)
	}
	// Shorten the busy handler of every connection: any wait in SQLite
	// would now fail at once.
	conns := make([]interface{ Close() error }, 0, 8)
	for range 8 {
		c, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.ExecContext(ctx, `PRAGMA busy_timeout = 0`); err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	for _, c := range conns {
		c.Close()
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16*20)
	for w := range 16 {
		wg.Go(func() {
			for i := range 20 {
				tx, err := db.BeginTx(ctx, nil)
				if err != nil {
					errs <- err
					return
				}
				if _, err := tx.ExecContext(ctx, `INSERT INTO t (n) VALUES (?)`, w*100+i); err != nil {
					tx.Rollback()
					errs <- err
					return
				}
				if err := tx.Commit(); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("a writer failed: %v", err)
	}
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM t`).Scan(&n); err != nil || n != 16*20 {
		t.Fatalf("rows %d (%v), want %d", n, err, 16*20)
	}
	// A transaction abandoned by cancelling its context gives its turn back.
	cctx, cancel := context.WithCancel(ctx)
	tx, err := db.BeginTx(cctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	_ = tx
	done := make(chan error, 1)
	go func() {
		tx2, err := db.BeginTx(ctx, nil)
		if err == nil {
			err = tx2.Rollback()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a cancelled transaction kept the write lock")
	}
	if lockFor(db) == nil {
		t.Fatal("Open registered no write lock")
	}
}

// The connections of a handle opened by Open leave checkpoints to the
// handle's own goroutine, which DB.Close stops (goleak checks it in
// TestMain), and which keeps the log from growing without bound.
func TestOpenCheckpointsInTheBackground(t *testing.T) {
	path := t.TempDir() + "/ckpt.db"
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	var auto int
	if err := db.QueryRowContext(ctx, `PRAGMA wal_autocheckpoint`).Scan(&auto); err != nil || auto != 0 {
		t.Fatalf("wal_autocheckpoint = %d (%v), want 0 on the handle's connections", auto, err)
	}
	if _, err := db.ExecContext(ctx, `CREATE TABLE t (b BLOB)`); err != nil {
		t.Fatal(err)
	}
	for range 300 {
		if _, err := db.ExecContext(ctx, `INSERT INTO t (b) VALUES (randomblob(8000))`); err != nil {
			t.Fatal(err)
		}
	}
	// With automatic checkpoints off, the rows reach the database file only
	// through the background checkpoint: the file grows to hold them.
	var size int64
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if size = fi.Size(); size > 2<<20 {
			break
		}
	}
	if size <= 2<<20 {
		t.Fatalf("database file %d bytes after 2.4 MB of rows: the log was not checkpointed", size)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}
