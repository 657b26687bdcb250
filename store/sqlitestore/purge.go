package sqlitestore

import (
	"context"

	"github.com/reliar/reliar/outbox/outboxdriver"
)

// DefaultPurgeBatch caps each statement of a purge pass whose request gives
// no BatchSize.
const DefaultPurgeBatch = 1000

// expiredError is the last_error of rows the expiry sweep moves to dead.
const expiredError = "expired before publication"

// Each purge statement picks at most ?2 rows in a subselect and repeats the
// subselect's full predicate on the outer statement, so it never touches a
// row outside it; ?1 is the cutoff (or now for the expiry sweep).

const purgePublished = `DELETE FROM outbox
	WHERE sequence IN (
	    SELECT sequence FROM outbox
	    WHERE published_at IS NOT NULL AND published_at < ?1
	    ORDER BY published_at LIMIT ?2)
	  AND published_at IS NOT NULL AND published_at < ?1`

const purgeDead = `DELETE FROM outbox
	WHERE sequence IN (
	    SELECT sequence FROM outbox
	    WHERE dead_at IS NOT NULL AND dead_at < ?1
	    ORDER BY dead_at LIMIT ?2)
	  AND dead_at IS NOT NULL AND dead_at < ?1`

// expireRows moves expired pending rows whose lease is free to dead; a row
// held by a live lease is left to its holder.
const expireRows = `UPDATE outbox SET
	    dead_at = ?1, dead_reason = 'expired', last_error = ?3,
	    locked_by = NULL, locked_until = NULL, lease_token = NULL,
	    updated_at = ?1
	WHERE sequence IN (
	    SELECT sequence FROM outbox
	    WHERE expires_at IS NOT NULL AND expires_at <= ?1
	      AND published_at IS NULL AND dead_at IS NULL
	      AND (locked_until IS NULL OR locked_until <= ?1)
	    ORDER BY expires_at LIMIT ?2)
	  AND expires_at IS NOT NULL AND expires_at <= ?1
	  AND published_at IS NULL AND dead_at IS NULL
	  AND (locked_until IS NULL OR locked_until <= ?1)`

// Purge runs one bounded pass of three statements, each capped at
// req.BatchSize rows (DefaultPurgeBatch when it is not positive): it deletes
// published rows older than PublishedRetention and dead rows older than
// DeadRetention (each skipped when nil), and moves expired pending rows whose
// lease is free to dead with reason expired.
func (s *Store) Purge(ctx context.Context, req outboxdriver.PurgeRequest) (outboxdriver.PurgeReport, error) {
	limit := req.BatchSize
	if limit <= 0 {
		limit = DefaultPurgeBatch
	}
	now := s.now()
	var rep outboxdriver.PurgeReport
	var err error
	if req.PublishedRetention != nil {
		cutoff := toMicros(now.Add(-*req.PublishedRetention))
		if rep.PublishedDeleted, err = s.exec(ctx, "purge", purgePublished, cutoff, limit); err != nil {
			return rep, err
		}
	}
	if req.DeadRetention != nil {
		cutoff := toMicros(now.Add(-*req.DeadRetention))
		if rep.DeadDeleted, err = s.exec(ctx, "purge", purgeDead, cutoff, limit); err != nil {
			return rep, err
		}
	}
	rep.Expired, err = s.exec(ctx, "purge", expireRows, toMicros(now), limit, expiredError)
	return rep, err
}
