package sqlitestore_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
	"github.com/reliar/reliar/store/sqlitestore"
)

func TestOpenSettings(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "dir with space?#%")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	db := openDB(t, filepath.Join(dir, "x.db"))
	if _, err := os.Stat(filepath.Join(dir, "x.db")); err != nil {
		t.Fatalf("database not created at its path: %v", err)
	}
	tests := []struct {
		pragma string
		want   string
	}{
		{"journal_mode", "wal"},
		{"busy_timeout", "10000"},
		{"foreign_keys", "1"},
		{"synchronous", "2"},
	}
	for _, tt := range tests {
		var got string
		if err := db.QueryRow("PRAGMA " + tt.pragma).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != tt.want {
			t.Errorf("PRAGMA %s = %s, want %s", tt.pragma, got, tt.want)
		}
	}
}

func TestOpenRefuses(t *testing.T) {
	notDB := filepath.Join(t.TempDir(), "not.db")
	if err := os.WriteFile(notDB, []byte(strings.Repeat("not a database ", 100)), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"", ":memory:", notDB, filepath.Join(t.TempDir(), "missing", "dir", "x.db")} {
		if db, err := sqlitestore.Open(path); err == nil {
			db.Close()
			t.Errorf("Open(%q) succeeded", path)
		}
	}
}

func TestOpenRelativePath(t *testing.T) {
	t.Chdir(t.TempDir())
	db := openDB(t, "rel.db")
	if _, err := db.Exec(`CREATE TABLE t (x INTEGER)`); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat("rel.db"); err != nil {
		t.Fatalf("relative database not created in the working directory: %v", err)
	}
}

// Open's handles begin every read-write transaction with BEGIN IMMEDIATE:
// an open transaction that has not written yet already holds the write lock.
func TestTransactionsAreImmediate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	db := openDB(t, path)
	if _, err := db.Exec(`CREATE TABLE t (x INTEGER)`); err != nil {
		t.Fatal(err)
	}
	tx, err := db.BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	other := impatientDB(t, path)
	_, err = other.Exec(`INSERT INTO t VALUES (1)`)
	if !isBusy(err) {
		t.Fatalf("write beside an open transaction: %v, want SQLITE_BUSY", err)
	}
}

// impatientDB opens path with a 20 ms busy timeout.
func impatientDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	dsn := strings.Replace(sqlitestore.DSN(path), "busy_timeout%2810000%29", "busy_timeout%2820%29", 1)
	if dsn == sqlitestore.DSN(path) {
		t.Fatalf("DSN %s has no busy timeout to replace", dsn)
	}
	db, err := sql.Open(sqlitestore.DriverName, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// isBusy reports whether err is a store error for SQLITE_BUSY.
func isBusy(err error) bool {
	return err != nil && strings.Contains(err.Error(), "SQLITE_BUSY")
}

// While another connection holds the write lock, store operations wait up
// to the busy timeout and then fail with a transient error; a context
// deadline ends the wait early, also transiently.
func TestBusyIsTransient(t *testing.T) {
	ctx := t.Context()
	db, path := newDB(t)
	patient, err := sqlitestore.New(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if err := enqueue(ctx, patient, newMsgs(1)...); err != nil {
		t.Fatal(err)
	}
	s, err := sqlitestore.New(ctx, impatientDB(t, path))
	if err != nil {
		t.Fatal(err)
	}
	holder, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Rollback()

	ops := []struct {
		name string
		s    *sqlitestore.Store
		ctx  func() (context.Context, context.CancelFunc)
	}{
		{"busy timeout", s, func() (context.Context, context.CancelFunc) { return ctx, func() {} }},
		{"context deadline", patient, func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(ctx, 50*time.Millisecond)
		}},
	}
	for _, op := range ops {
		t.Run(op.name, func(t *testing.T) {
			calls := []struct {
				name string
				call func(ctx context.Context) error
			}{
				{"acquire", func(ctx context.Context) error {
					_, err := op.s.Acquire(ctx, acquireReq(1))
					return err
				}},
				{"release", func(ctx context.Context) error {
					_, err := op.s.Release(ctx, []outboxdriver.Lease{{ID: reliar.NewMessageID()}})
					return err
				}},
				{"purge", func(ctx context.Context) error {
					_, err := op.s.Purge(ctx, purgeAll())
					return err
				}},
			}
			for _, c := range calls {
				cctx, cancel := op.ctx()
				err := c.call(cctx)
				cancel()
				if err == nil || reliar.IsPermanent(err) {
					t.Errorf("%s with the write lock held elsewhere: %v, want a transient error", c.name, err)
				}
				var se *sqlitestore.Error
				if !errors.As(err, &se) {
					t.Errorf("%s: %v is not a *sqlitestore.Error", c.name, err)
				}
			}
		})
	}
	// The store works again once the lock is released.
	holder.Rollback()
	b, err := s.Acquire(ctx, acquireReq(1))
	if err != nil || len(b.Records) != 1 {
		t.Fatalf("Acquire after the lock was released: %+v, %v", b, err)
	}
}

// purgeAll is a purge request with zero retentions.
func purgeAll() outboxdriver.PurgeRequest {
	var zero time.Duration
	return outboxdriver.PurgeRequest{PublishedRetention: &zero, DeadRetention: &zero, BatchSize: 100}
}
