package sqlitestore

import (
	"context"
	"database/sql"
	"time"

	"github.com/reliar/reliar/outbox/outboxdriver"
	"github.com/reliar/reliar/outbox/outboxdriver/outboxsql"
)

// Every outcome write is one statement fenced by id and lease token: the
// leases come as a JSON array (?2) joined to the table, and a lease that is
// not the row's current one matches nothing. A single write statement takes
// SQLite's write lock before it reads, so it needs no explicit transaction.
// attempts saturates at the top of INTEGER (see claimRows).

// completeRows marks the leased rows published.
const completeRows = `UPDATE outbox SET
	    published_at = ?1,
	    attempts = min(attempts, 9223372036854775806) + 1,
	    locked_by = NULL, locked_until = NULL, lease_token = NULL,
	    updated_at = ?1
	FROM json_each(?2) AS j
	WHERE outbox.id = j.value->>0 AND outbox.lease_token = j.value->>1`

// failRows records failed attempts. Each element of ?2 is [id, token,
// last_error, available_at, dead_reason]: a retry when dead_reason is null
// (available_at is then set), a move to dead otherwise.
const failRows = `UPDATE outbox SET
	    attempts = min(attempts, 9223372036854775806) + 1,
	    last_error = j.value->>2,
	    available_at = coalesce(j.value->>3, available_at),
	    dead_at = CASE WHEN j.value->>4 IS NULL THEN NULL ELSE ?1 END,
	    dead_reason = j.value->>4,
	    locked_by = NULL, locked_until = NULL, lease_token = NULL,
	    updated_at = ?1
	FROM json_each(?2) AS j
	WHERE outbox.id = j.value->>0 AND outbox.lease_token = j.value->>1`

// releaseRows clears the leases and nothing else.
const releaseRows = `UPDATE outbox SET
	    locked_by = NULL, locked_until = NULL, lease_token = NULL,
	    updated_at = ?1
	FROM json_each(?2) AS j
	WHERE outbox.id = j.value->>0 AND outbox.lease_token = j.value->>1`

// extendRows moves the lease expiry to ?3.
const extendRows = `UPDATE outbox SET
	    locked_until = ?3,
	    updated_at = ?1
	FROM json_each(?2) AS j
	WHERE outbox.id = j.value->>0 AND outbox.lease_token = j.value->>1`

// Complete marks the leased rows published: published_at = now, attempts + 1,
// lease cleared.
func (s *Store) Complete(ctx context.Context, leases []outboxdriver.Lease) (int64, error) {
	return s.writeLeases(ctx, "complete", completeRows, leases)
}

// Release clears the leases without recording an attempt.
func (s *Store) Release(ctx context.Context, leases []outboxdriver.Lease) (int64, error) {
	return s.writeLeases(ctx, "release", releaseRows, leases)
}

// ExtendLease moves the lease expiry of the held rows to now + d.
func (s *Store) ExtendLease(ctx context.Context, leases []outboxdriver.Lease, d time.Duration) (int64, error) {
	if len(leases) == 0 {
		return 0, nil
	}
	now := s.now()
	n, err := s.dispatchExec(ctx, "extend lease", extendRows, toMicros(now), outboxsql.LeaseArg(leases), toMicros(now.Add(d)))
	s.cfg.LogShortfall(ctx, "extend lease", len(leases), n)
	return n, err
}

// Fail records failed attempts: attempts + 1, last_error (sanitized), lease
// cleared, and either available_at = now + RetryAfter or, when DeadReason is
// set, dead_at = now and dead_reason.
func (s *Store) Fail(ctx context.Context, failures []outboxdriver.FailedOutcome) (int64, error) {
	if len(failures) == 0 {
		return 0, nil
	}
	now := s.now()
	elems := make([][5]any, len(failures))
	for i, f := range failures {
		e := [5]any{f.ID.String(), f.Token.String(), outboxdriver.SanitizeError(f.Error), nil, nil}
		if f.DeadReason != "" {
			e[4] = string(f.DeadReason)
		} else {
			e[3] = toMicros(now.Add(max(f.RetryAfter, 0)))
		}
		elems[i] = e
	}
	n, err := s.dispatchExec(ctx, "fail", failRows, toMicros(now), outboxsql.JSONArg(elems))
	s.cfg.LogShortfall(ctx, "fail", len(failures), n)
	return n, err
}

// writeLeases runs one of the lease-fenced statements that take now and the
// leases.
func (s *Store) writeLeases(ctx context.Context, op, query string, leases []outboxdriver.Lease) (int64, error) {
	if len(leases) == 0 {
		return 0, nil
	}
	n, err := s.dispatchExec(ctx, op, query, s.clock(), outboxsql.LeaseArg(leases))
	s.cfg.LogShortfall(ctx, op, len(leases), n)
	return n, err
}

// exec runs one statement and returns the rows it affected.
//
// On a handle opened by Open it holds the write lock at the front of the
// line, like every write of the store.
func (s *Store) exec(ctx context.Context, op, query string, args ...any) (int64, error) {
	return s.execOn(ctx, false, op, query, args...)
}

// dispatchExec is exec for the store's dispatch writes, which
// WithAsyncCommit commits without waiting for the disk.
func (s *Store) dispatchExec(ctx context.Context, op, query string, args ...any) (int64, error) {
	return s.execOn(ctx, true, op, query, args...)
}

func (s *Store) execOn(ctx context.Context, dispatch bool, op, query string, args ...any) (int64, error) {
	var n int64
	run := func(ctx context.Context, conn *sql.Conn) error {
		var err error
		n, err = outboxsql.Affected(conn.ExecContext(ctx, query, args...))
		return wrapErr(op, err)
	}
	err := storeWrite(ctx, s.db, op, func(ctx context.Context, conn *sql.Conn) error {
		if dispatch {
			return s.dispatchWrite(ctx, conn, op, run)
		}
		return run(ctx, conn)
	})
	return n, err
}
