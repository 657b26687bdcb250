package mysqlstore

import (
	"context"
	"time"

	"github.com/reliar/reliar/outbox/outboxdriver"
	"github.com/reliar/reliar/outbox/outboxdriver/outboxsql"
)

// Every outcome write is one statement fenced by id and lease token: the
// leases come as a JSON array (the first parameter) turned into rows by
// JSON_TABLE and joined to the table through its unique id index; a lease
// that is not the row's current one matches nothing.

// leaseTable turns a JSON array of [id, token] pairs into rows.
const leaseTable = `JSON_TABLE(?, '$[*]' COLUMNS (
	    id    CHAR(36) CHARACTER SET ascii PATH '$[0]',
	    token CHAR(36) CHARACTER SET ascii PATH '$[1]')) AS j`

const completeRows = `UPDATE outbox AS o JOIN ` + leaseTable + `
	    ON o.id = j.id AND o.lease_token = j.token
	SET o.published_at = UTC_TIMESTAMP(6),
	    o.attempts = LEAST(o.attempts, 2147483646) + 1,
	    o.locked_by = NULL, o.locked_until = NULL, o.lease_token = NULL,
	    o.updated_at = UTC_TIMESTAMP(6)`

const releaseRows = `UPDATE outbox AS o JOIN ` + leaseTable + `
	    ON o.id = j.id AND o.lease_token = j.token
	SET o.locked_by = NULL, o.locked_until = NULL, o.lease_token = NULL,
	    o.updated_at = UTC_TIMESTAMP(6)`

// extendRows moves the lease expiry to now + ? microseconds.
const extendRows = `UPDATE outbox AS o JOIN ` + leaseTable + `
	    ON o.id = j.id AND o.lease_token = j.token
	SET o.locked_until = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND,
	    o.updated_at = UTC_TIMESTAMP(6)`

// failRows records failed attempts. Each element is [id, token, last_error,
// delay in microseconds, dead_reason]: a retry when dead_reason is null, a
// move to dead otherwise. No assignment reads a column another one sets, so
// their order (unspecified in a multi-table UPDATE) does not matter.
const failRows = `UPDATE outbox AS o JOIN JSON_TABLE(?, '$[*]' COLUMNS (
	    id       CHAR(36) CHARACTER SET ascii PATH '$[0]',
	    token    CHAR(36) CHARACTER SET ascii PATH '$[1]',
	    err      TEXT PATH '$[2]',
	    delay_us BIGINT PATH '$[3]',
	    reason   VARCHAR(32) PATH '$[4]')) AS j
	    ON o.id = j.id AND o.lease_token = j.token
	SET o.attempts = LEAST(o.attempts, 2147483646) + 1,
	    o.last_error = j.err,
	    o.available_at = CASE WHEN j.reason IS NULL
	        THEN UTC_TIMESTAMP(6) + INTERVAL j.delay_us MICROSECOND ELSE o.available_at END,
	    o.dead_at = CASE WHEN j.reason IS NULL THEN NULL ELSE UTC_TIMESTAMP(6) END,
	    o.dead_reason = j.reason,
	    o.locked_by = NULL, o.locked_until = NULL, o.lease_token = NULL,
	    o.updated_at = UTC_TIMESTAMP(6)`

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
	return s.writeLeases(ctx, "extend lease", extendRows, leases, micros(d))
}

// Fail records failed attempts: attempts + 1, last_error (sanitized), lease
// cleared, and either available_at = now + RetryAfter or, when DeadReason is
// set, dead_at = now and dead_reason.
func (s *Store) Fail(ctx context.Context, failures []outboxdriver.FailedOutcome) (int64, error) {
	if len(failures) == 0 {
		return 0, nil
	}
	elems := make([][5]any, len(failures))
	for i, f := range failures {
		e := [5]any{f.ID.String(), f.Token.String(), outboxdriver.SanitizeError(f.Error), micros(max(f.RetryAfter, 0)), nil}
		if f.DeadReason != "" {
			e[4] = string(f.DeadReason)
		}
		elems[i] = e
	}
	n, err := s.exec(ctx, "fail", failRows, outboxsql.JSONArg(elems))
	s.cfg.LogShortfall(ctx, "fail", len(failures), n)
	return n, err
}

// writeLeases runs one of the lease-fenced statements.
func (s *Store) writeLeases(ctx context.Context, op, query string, leases []outboxdriver.Lease, args ...any) (int64, error) {
	if len(leases) == 0 {
		return 0, nil
	}
	n, err := s.exec(ctx, op, query, append([]any{outboxsql.LeaseArg(leases)}, args...)...)
	s.cfg.LogShortfall(ctx, op, len(leases), n)
	return n, err
}

// exec runs one statement and returns the rows it affected.
func (s *Store) exec(ctx context.Context, op, query string, args ...any) (int64, error) {
	n, err := outboxsql.Affected(s.db.ExecContext(ctx, query, args...))
	return n, wrapErr(op, err)
}
