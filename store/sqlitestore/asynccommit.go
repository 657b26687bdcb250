package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// WithAsyncCommit commits the store's own dispatch writes (the claims of
// Acquire, and Complete, Fail, Release and ExtendLease) without waiting for
// the disk: each runs on its connection with synchronous=NORMAL, and the
// connection's own setting is put back before anything else uses it.
// Enqueue, which runs in the caller's transaction, is never affected, nor
// are Purge, the dead-letter operations, the inbox and Migrate. It is
// SQLite's counterpart of pgstore.WithAsyncCommit.
//
// In WAL mode a commit at synchronous=NORMAL survives a crash of the
// process; only a crash of the operating system or a power loss can undo
// the last of them, and the next commit at FULL (any producer's) makes every
// earlier one durable with it. Delivery stays at-least-once and no message
// is ever lost, since the message itself was committed synchronously by its
// producer: a lost Complete republishes its message, a lost Fail or Release
// makes the row due earlier, and a lost claim makes the row due again as if
// it had never been claimed. Such a republish is a duplicate outside the
// dispatcher's four documented windows, as with pgstore.WithAsyncCommit.
//
// What it saves: every claim and outcome write is otherwise a commit that
// waits for an fsync of the log, holding SQLite's one write lock — and every
// producer queued behind it — through that wait. `reliar demo` uses it; see
// BENCHMARKS.md for the measurements. New refuses it on a database that is
// not in WAL mode, where synchronous=NORMAL could leave the file corrupt
// after a power loss.
func WithAsyncCommit() Option {
	return func(o *options) error {
		o.async = true
		return nil
	}
}

// checkWAL fails unless db's file is in WAL journal mode, which is a
// property of the file: every connection sees the same.
func checkWAL(ctx context.Context, db *sql.DB) error {
	var mode string
	if err := db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return fmt.Errorf("sqlitestore: new: read journal mode: %w", err)
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("%w: WithAsyncCommit needs a database in WAL journal mode, this one is in %q mode (open it with Open or DSN)", ErrInvalidOption, mode)
	}
	return nil
}

// synchronousNormal is SQLite's synchronous=NORMAL.
const synchronousNormal = 1

// dispatchWrite runs fn on conn, a connection holding the write lock for
// one of the dispatch writes: with WithAsyncCommit at synchronous=NORMAL,
// the connection's own setting restored afterwards. A connection whose
// setting cannot be restored is discarded, so that no producer's commit
// ever runs on it at NORMAL.
func (s *Store) dispatchWrite(ctx context.Context, conn *sql.Conn, op string, fn func(context.Context, *sql.Conn) error) error {
	if !s.async {
		return fn(ctx, conn)
	}
	var was int
	if err := conn.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&was); err != nil {
		return wrapErr(op, err)
	}
	if was <= synchronousNormal {
		return fn(ctx, conn)
	}
	if _, err := conn.ExecContext(ctx, "PRAGMA synchronous = NORMAL"); err != nil {
		discard(conn)
		return wrapErr(op, err)
	}
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rollbackTimeout)
		defer cancel()
		if _, err := conn.ExecContext(rctx, fmt.Sprintf("PRAGMA synchronous = %d", was)); err != nil {
			discard(conn)
		}
	}()
	return fn(ctx, conn)
}
