package sqlitestore_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
	"github.com/reliar/reliar/outbox/storetest"
	"github.com/reliar/reliar/store/sqlitestore"
)

// TestConformanceAsyncCommit runs the store contract's suite on stores
// with WithAsyncCommit: the dispatch writes behave the same, only their
// commits do not wait for the disk.
func TestConformanceAsyncCommit(t *testing.T) {
	if testing.Short() {
		t.Skip("the suite runs in full without the option in TestConformance")
	}
	storetest.Run(t, func(t *testing.T) storetest.Harness {
		return target.Harness(newStore(t, sqlitestore.WithAsyncCommit()))
	})
}

// synchronous reads the synchronous setting of db's one connection.
func synchronous(t *testing.T, db *sql.DB) int {
	t.Helper()
	var v int
	if err := db.QueryRowContext(t.Context(), "PRAGMA synchronous").Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestAsyncCommitRestoresTheConnection runs every dispatch write on a
// handle of one connection and checks after each that the connection is
// back at its own setting: a producer's commit after a claim or an outcome
// write still waits for the disk. A connection the application set to
// EXTRA stays at EXTRA, one it set to NORMAL at NORMAL.
func TestAsyncCommitRestoresTheConnection(t *testing.T) {
	for _, own := range []struct {
		name  string
		value int
	}{{"FULL", 2}, {"EXTRA", 3}, {"NORMAL", 1}} {
		t.Run(own.name, func(t *testing.T) {
			ctx := t.Context()
			db, _ := newDB(t)
			db.SetMaxOpenConns(1)
			if _, err := db.ExecContext(ctx, "PRAGMA synchronous = "+own.name); err != nil {
				t.Fatal(err)
			}
			s, err := sqlitestore.New(ctx, db, sqlitestore.WithAsyncCommit())
			if err != nil {
				t.Fatal(err)
			}
			check := func(after string) {
				t.Helper()
				if got := synchronous(t, db); got != own.value {
					t.Fatalf("after %s: synchronous = %d, want the connection's own %d", after, got, own.value)
				}
			}
			msgs := make([]reliar.Outgoing, 4)
			for i := range msgs {
				msgs[i] = reliar.NewMsg(orderPlaced{OrderID: "o-1"})
			}
			if err := enqueue(ctx, s, msgs...); err != nil {
				t.Fatal(err)
			}
			req := outboxdriver.AcquireRequest{Worker: "w", BatchSize: 4, Lease: time.Minute}
			batch, err := s.Acquire(ctx, req)
			if err != nil || len(batch.Records) != 4 {
				t.Fatalf("Acquire: %d records, %v", len(batch.Records), err)
			}
			check("Acquire")
			lease := func(i int) []outboxdriver.Lease { return []outboxdriver.Lease{batch.Records[i].Lease()} }
			if _, err := s.ExtendLease(ctx, lease(0), time.Minute); err != nil {
				t.Fatal(err)
			}
			check("ExtendLease")
			if n, err := s.Complete(ctx, lease(0)); err != nil || n != 1 {
				t.Fatalf("Complete: %d, %v", n, err)
			}
			check("Complete")
			if n, err := s.Release(ctx, lease(1)); err != nil || n != 1 {
				t.Fatalf("Release: %d, %v", n, err)
			}
			check("Release")
			fail := []outboxdriver.FailedOutcome{{Lease: batch.Records[2].Lease(), Error: "refused", DeadReason: outboxdriver.DeadPermanent}}
			if n, err := s.Fail(ctx, fail); err != nil || n != 1 {
				t.Fatalf("Fail: %d, %v", n, err)
			}
			check("Fail")
			// A write that fails inside the transaction restores it too.
			cancelled, cancel := context.WithCancel(ctx)
			cancel()
			if _, err := s.Acquire(cancelled, req); err == nil {
				t.Fatal("Acquire on a cancelled context succeeded")
			}
			check("a cancelled Acquire")
		})
	}
}

// TestAsyncCommitNeedsWAL: synchronous=NORMAL is safe only in WAL mode, so
// the option is refused on a database in another journal mode, and the
// store works there without it.
func TestAsyncCommitNeedsWAL(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "rollback-journal.db")
	db, err := sql.Open(sqlitestore.DriverName, "file:"+path+"?_pragma=journal_mode(DELETE)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := sqlitestore.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	_, err = sqlitestore.New(ctx, db, sqlitestore.WithAsyncCommit())
	if !errors.Is(err, sqlitestore.ErrInvalidOption) {
		t.Fatalf("New with WithAsyncCommit in rollback-journal mode: %v, want ErrInvalidOption", err)
	}
	if _, err := sqlitestore.New(ctx, db); err != nil {
		t.Fatalf("New without it: %v", err)
	}
}

// An application's own handle, opened with sql.Open and DSN rather than
// Open (no write queue in Go), gets its connection back at FULL too.
func TestAsyncCommitOnAnApplicationsHandle(t *testing.T) {
	ctx := t.Context()
	db, err := sql.Open(sqlitestore.DriverName, sqlitestore.DSN(filepath.Join(t.TempDir(), "app.db")))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if err := sqlitestore.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	s, err := sqlitestore.New(ctx, db, sqlitestore.WithAsyncCommit())
	if err != nil {
		t.Fatal(err)
	}
	if err := enqueue(ctx, s, newMsgs(3)...); err != nil {
		t.Fatal(err)
	}
	batch, err := s.Acquire(ctx, outboxdriver.AcquireRequest{Worker: "w", BatchSize: 3, Lease: time.Minute})
	if err != nil || len(batch.Records) != 3 {
		t.Fatalf("Acquire: %d records, %v", len(batch.Records), err)
	}
	leases := make([]outboxdriver.Lease, len(batch.Records))
	for i := range batch.Records {
		leases[i] = batch.Records[i].Lease()
	}
	if n, err := s.Complete(ctx, leases); err != nil || n != 3 {
		t.Fatalf("Complete: %d, %v", n, err)
	}
	if got := synchronous(t, db); got != 2 {
		t.Fatalf("synchronous = %d after the dispatch writes, want the DSN's FULL (2)", got)
	}
}
