package mysqlstore

import (
	"context"
	"database/sql"

	"github.com/reliar/reliar/outbox/outboxdriver"
	"github.com/reliar/reliar/outbox/outboxdriver/outboxsql"
)

// DefaultPurgeBatch caps each statement of a purge pass whose request gives
// no BatchSize.
const DefaultPurgeBatch = 1000

// expiredError is the last_error of rows the expiry sweep moves to dead.
const expiredError = "expired before publication"

// Each purge statement is a single-table DELETE or UPDATE with ORDER BY and
// LIMIT: bounded, and its WHERE is checked on every row it locks.

const purgePublished = `DELETE FROM outbox
	WHERE published_at < UTC_TIMESTAMP(6) - INTERVAL ? MICROSECOND
	ORDER BY published_at LIMIT ?`

const purgeDead = `DELETE FROM outbox
	WHERE dead_at < UTC_TIMESTAMP(6) - INTERVAL ? MICROSECOND
	ORDER BY dead_at LIMIT ?`

// expireRows moves expired pending rows whose lease is free to dead; a row
// held by a live lease is left to its holder.
const expireRows = `UPDATE outbox SET
	    dead_at = UTC_TIMESTAMP(6), dead_reason = 'expired', last_error = ?,
	    locked_by = NULL, locked_until = NULL, lease_token = NULL,
	    updated_at = UTC_TIMESTAMP(6)
	WHERE pending_expires_at <= UTC_TIMESTAMP(6)
	  AND (locked_until IS NULL OR locked_until <= UTC_TIMESTAMP(6))
	ORDER BY pending_expires_at LIMIT ?`

// Purge runs one bounded pass of three statements, each capped at
// req.BatchSize rows (DefaultPurgeBatch when it is not positive): it deletes
// published rows older than PublishedRetention and dead rows older than
// DeadRetention (each skipped when nil), and moves expired pending rows whose
// lease is free to dead with reason expired. The pass is one READ COMMITTED
// transaction, which takes no gap locks.
func (s *Store) Purge(ctx context.Context, req outboxdriver.PurgeRequest) (outboxdriver.PurgeReport, error) {
	limit := req.BatchSize
	if limit <= 0 {
		limit = DefaultPurgeBatch
	}
	var rep outboxdriver.PurgeReport
	err := s.inTx(ctx, "purge", func(tx *sql.Tx) error {
		rep = outboxdriver.PurgeReport{}
		var err error
		if req.PublishedRetention != nil {
			if rep.PublishedDeleted, err = outboxsql.Affected(tx.ExecContext(ctx, purgePublished, micros(*req.PublishedRetention), limit)); err != nil {
				return err
			}
		}
		if req.DeadRetention != nil {
			if rep.DeadDeleted, err = outboxsql.Affected(tx.ExecContext(ctx, purgeDead, micros(*req.DeadRetention), limit)); err != nil {
				return err
			}
		}
		rep.Expired, err = outboxsql.Affected(tx.ExecContext(ctx, expireRows, expiredError, limit))
		return err
	})
	if err != nil {
		return outboxdriver.PurgeReport{}, err
	}
	return rep, nil
}
