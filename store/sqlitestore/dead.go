package sqlitestore

import (
	"context"
	"fmt"
	"strings"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
	"github.com/reliar/reliar/outbox/outboxdriver/outboxsql"
)

// listedColumns are the columns a dead-letter listing reads.
var listedColumns = outboxsql.Listing{
	Prefix: outboxsql.PrefixSubstr,
	Octets: func(c string) string { return "length(" + c + ")" },
}.Columns()

// deadPayload reads at most ?2 bytes of one dead row's payload.
const deadPayload = `SELECT sequence, message_type, content_type, substr(payload, 1, ?2), length(payload)
	FROM outbox WHERE id = ?1 AND dead_at IS NOT NULL`

// listDead reads one page of dead rows in sequence order through
// ix_outbox_dead. Empty filters (?1 type, ?2 tenant, ?3 dead-before, NULL
// when zero) match everything; ?4 is the cursor, ?5 the limit.
// The listing reads no payload (its length only, which SQLite reads
// without loading the blob) and caps metadata, headers and last_error.
var listDead = `SELECT ` + listedColumns + `
	FROM outbox
	WHERE dead_at IS NOT NULL
	  AND (?1 = '' OR message_type = ?1)
	  AND (?2 = '' OR tenant_id = ?2)
	  AND (?3 IS NULL OR dead_at < ?3)
	  AND sequence > ?4
	ORDER BY sequence
	LIMIT ?5`

// listDeadNewest is listDead for a Newest listing: newest first, from a
// cursor ?4 the rows come before.
var listDeadNewest = strings.Replace(listDead, "AND sequence > ?4\n\tORDER BY sequence", "AND sequence < ?4\n\tORDER BY sequence DESC", 1)

// retryDead makes dead rows due again. It resets attempts and lapsed claims,
// keeps last_error, and drops an expires_at already past.
const retryDead = `UPDATE outbox SET
	    dead_at = NULL, dead_reason = NULL,
	    locked_by = NULL, locked_until = NULL, lease_token = NULL,
	    available_at = ?1,
	    attempts = 0,
	    lapsed_claims = 0,
	    expires_at = CASE WHEN expires_at <= ?1 THEN NULL ELSE expires_at END,
	    updated_at = ?1
	WHERE id IN (SELECT value FROM json_each(?2)) AND dead_at IS NOT NULL`

// purgeDeadRows deletes dead rows by id.
const purgeDeadRows = `DELETE FROM outbox
	WHERE id IN (SELECT value FROM json_each(?1)) AND dead_at IS NOT NULL`

// ListDead returns one page of dead rows ordered by sequence (descending
// for a Newest listing). Rows that cannot be decoded come back in
// Poisoned. The cursor, the last sequence scanned, is set only when the
// page was full.
func (s *Store) ListDead(ctx context.Context, q outboxdriver.DeadQuery) (outboxdriver.DeadLetterPage, error) {
	limit := q.EffectiveLimit()
	var before any
	if !q.DeadBefore.IsZero() {
		before = toMicros(q.DeadBefore)
	}
	query := listDead
	if q.Newest {
		query = listDeadNewest
	}
	rows, err := s.db.QueryContext(ctx, query, q.MessageType, q.TenantID, before, q.SequenceBound(), limit)
	if err != nil {
		return outboxdriver.DeadLetterPage{}, wrapErr("list dead", err)
	}
	page, err := outboxsql.DeadPage(rows, limit, micros)
	if q.Newest {
		page = page.Newest()
	}
	return page, wrapErr("list dead", err)
}

// DeadPayload reads at most max bytes of one dead row's payload, cut in its
// SQL.
func (s *Store) DeadPayload(ctx context.Context, id reliar.MessageID, max int) (outboxdriver.DeadPayload, error) {
	p := outboxdriver.DeadPayload{ID: id}
	found, err := outboxsql.ScanDeadPayload(s.db.QueryRowContext(ctx, deadPayload, id.String(), outboxdriver.EffectivePayloadCap(max)), &p)
	if err != nil {
		return outboxdriver.DeadPayload{}, wrapErr("dead payload", err)
	}
	if !found {
		return outboxdriver.DeadPayload{}, fmt.Errorf("sqlitestore: dead payload %s: %w", id, outboxdriver.ErrNotDead)
	}
	return p, nil
}

// RetryDead makes dead rows due now: dead_at, dead_reason and the lease
// cleared, attempts and lapsed claims reset, last_error kept, an expires_at
// already past cleared. Ids of rows that are not dead are ignored.
func (s *Store) RetryDead(ctx context.Context, ids []reliar.MessageID) (int64, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	return s.exec(ctx, "retry dead", retryDead, s.clock(), idArg(ids))
}

// PurgeDead deletes dead rows. Ids of rows that are not dead are ignored.
func (s *Store) PurgeDead(ctx context.Context, ids []reliar.MessageID) (int64, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	return s.exec(ctx, "purge dead", purgeDeadRows, idArg(ids))
}

// idArg encodes ids as a JSON array of UUID strings.
func idArg(ids []reliar.MessageID) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = id.String()
	}
	return outboxsql.JSONArg(s)
}
