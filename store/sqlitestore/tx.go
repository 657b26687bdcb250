package sqlitestore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"time"
)

// querier is what statements run on: a *sql.DB, *sql.Conn or *sql.Tx.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// rollbackTimeout bounds the ROLLBACK after a failed transaction, which runs
// even when the operation's context is done.
const rollbackTimeout = 5 * time.Second

// immediate runs fn in a BEGIN IMMEDIATE transaction on one connection of
// db, whatever the handle's _txlock setting: the write lock is taken (waiting
// up to the busy timeout) before the first read, so a transaction that reads
// and then writes never fails for a commit that happened in between. fn's
// error is returned as it is; the transaction commits only when fn returns
// nil.
//
// On a handle opened by Open it holds the write lock at the front of the
// line (writelock.go), so it never waits in SQLite's busy handler for a
// writer of this process.
func immediate(ctx context.Context, db *sql.DB, op string, fn func(q querier) error) error {
	return storeWrite(ctx, db, op, func(ctx context.Context, conn *sql.Conn) error {
		return inImmediate(ctx, conn, op, fn)
	})
}

// dispatchTx is immediate for the store's dispatch writes, which
// WithAsyncCommit commits without waiting for the disk.
func (s *Store) dispatchTx(ctx context.Context, op string, fn func(q querier) error) error {
	return storeWrite(ctx, s.db, op, func(ctx context.Context, conn *sql.Conn) error {
		return s.dispatchWrite(ctx, conn, op, func(ctx context.Context, conn *sql.Conn) error {
			return inImmediate(ctx, conn, op, fn)
		})
	})
}

// inImmediate runs fn in a BEGIN IMMEDIATE transaction on conn.
func inImmediate(ctx context.Context, conn *sql.Conn, op string, fn func(q querier) error) error {
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		// The BEGIN may have been interrupted after it took effect.
		rollback(ctx, conn)
		return wrapErr(op, err)
	}
	if err := fn(conn); err != nil {
		rollback(ctx, conn)
		return err
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		rollback(ctx, conn)
		return wrapErr(op, err)
	}
	return nil
}

// rollback ends the open transaction on conn, even when ctx is done (its
// values, such as the write lock being held, are kept). When that fails the
// connection is discarded, so that no later user finds it inside a
// transaction.
func rollback(ctx context.Context, conn *sql.Conn) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rollbackTimeout)
	defer cancel()
	if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		discard(conn)
	}
}

// discard closes conn's driver connection instead of returning it to the
// pool.
func discard(conn *sql.Conn) {
	_ = conn.Raw(func(any) error { return driver.ErrBadConn })
}
