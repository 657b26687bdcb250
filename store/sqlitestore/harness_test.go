package sqlitestore_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/inbox"
	"github.com/reliar/reliar/outbox/outboxdriver/outboxsql"
	"github.com/reliar/reliar/outbox/outboxdriver/outboxsql/outboxsqltest"
	"github.com/reliar/reliar/store/sqlitestore"
)

// newDB opens a migrated database in a fresh file of the test's own
// temporary directory, closed when the test ends.
func newDB(t testing.TB) (*sql.DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "outbox.db")
	db := openDB(t, path)
	if err := sqlitestore.Migrate(t.Context(), db); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	return db, path
}

// openDB opens path with sqlitestore.Open and closes it when the test ends.
func openDB(t testing.TB, path string) *sql.DB {
	t.Helper()
	db, err := sqlitestore.Open(path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// newStore returns a store over a fresh migrated database.
func newStore(t testing.TB, opts ...sqlitestore.Option) *sqlitestore.Store {
	t.Helper()
	db, _ := newDB(t)
	s, err := sqlitestore.New(t.Context(), db, opts...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}

// enqueue writes msgs through s in one committed transaction.
func enqueue(ctx context.Context, s *sqlitestore.Store, msgs ...reliar.Outgoing) error {
	return outboxsqltest.Enqueue(ctx, s, msgs...)
}

// target describes the store to the shared tests of outboxsqltest.
var target = outboxsqltest.Target[int64]{
	New:   func(t testing.TB) outboxsqltest.Store { return newStore(t) },
	Inbox: func(s outboxsqltest.Store) inbox.Marker[*sql.Tx] { return s.(*sqlitestore.Store).Inbox() },
	Times: outboxsql.TimeCodec[int64]{
		Decode: func(us int64) time.Time { return time.UnixMicro(us).UTC() },
		Encode: time.Time.UnixMicro,
	},
	Now:     `CAST(unixepoch('subsec') * 1000000 AS INTEGER)`,
	Advance: advance,
	ErrorOp: func(err error) (string, bool) {
		var se *sqlitestore.Error
		if !errors.As(err, &se) {
			return "", false
		}
		return se.Op, true
	},
	Open:          func(ctx context.Context, db *sql.DB) (outboxsqltest.Store, error) { return sqlitestore.New(ctx, db) },
	Migrate:       func(ctx context.Context, db *sql.DB) error { return sqlitestore.Migrate(ctx, db) },
	SchemaVersion: sqlitestore.SchemaVersion,
	NotMigrated: func(err error) (int, int, bool) {
		var nm *sqlitestore.NotMigratedError
		if !errors.As(err, &nm) {
			return 0, 0, false
		}
		return nm.Have, nm.Want, true
	},
	ErrNilTx:          sqlitestore.ErrNilTx,
	ErrInvalidRequest: sqlitestore.ErrInvalidRequest,
}

// advance moves every stored time d into the past.
func advance(ctx context.Context, db *sql.DB, d time.Duration) error {
	us := d.Microseconds()
	_, err := db.ExecContext(ctx, `UPDATE outbox SET
		available_at = available_at - ?1,
		created_at = created_at - ?1,
		updated_at = updated_at - ?1,
		last_claimed_at = last_claimed_at - ?1,
		locked_until = locked_until - ?1,
		expires_at = expires_at - ?1,
		published_at = published_at - ?1,
		dead_at = dead_at - ?1`, us)
	return err
}
