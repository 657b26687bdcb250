package mysqlstore

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
	"github.com/reliar/reliar/outbox/outboxdriver/outboxsql"
)

// listedColumns are the columns a dead-letter listing reads.
var listedColumns = outboxsql.Listing{
	Prefix: func(c string, n int) string { return "LEFT(" + c + ", " + strconv.Itoa(n) + ")" },
	Octets: func(c string) string { return "OCTET_LENGTH(" + c + ")" },
}.Columns()

// deadPayload reads at most the second argument's bytes of one dead row's
// payload.
const deadPayload = `SELECT sequence, message_type, content_type, SUBSTRING(payload, 1, ?), OCTET_LENGTH(payload)
	FROM outbox WHERE id = ? AND dead_at IS NOT NULL`

// listDead reads one page of dead rows in sequence order through
// ix_outbox_dead. Empty filters match everything.
// The listing reads no payload (its length only) and caps metadata,
// headers and last_error.
var listDead = `SELECT ` + listedColumns + `
	FROM outbox
	WHERE is_dead = 1
	  AND sequence > ?
	  AND (? = '' OR message_type = ?)
	  AND (? = '' OR tenant_id = ?)
	  AND (? IS NULL OR dead_at < ?)
	ORDER BY is_dead, sequence
	LIMIT ?`

// listDeadNewest is listDead for a Newest listing: newest first, from a
// cursor the rows come before.
var listDeadNewest = strings.NewReplacer("AND sequence > ?", "AND sequence < ?",
	"ORDER BY is_dead, sequence", "ORDER BY is_dead DESC, sequence DESC").Replace(listDead)

// idChunk is the most ids one statement names.
const idChunk = 1000

// ListDead returns one page of dead rows ordered by sequence (descending
// for a Newest listing). Rows that cannot be decoded come back in
// Poisoned. The cursor, the last sequence scanned, is set only when the
// page was full.
func (s *Store) ListDead(ctx context.Context, q outboxdriver.DeadQuery) (outboxdriver.DeadLetterPage, error) {
	limit := q.EffectiveLimit()
	var before any
	if !q.DeadBefore.IsZero() {
		before = datetime.Encode(q.DeadBefore)
	}
	query := listDead
	if q.Newest {
		query = listDeadNewest
	}
	rows, err := s.db.QueryContext(ctx, query, q.SequenceBound(),
		q.MessageType, q.MessageType, q.TenantID, q.TenantID, before, before, limit)
	if err != nil {
		return outboxdriver.DeadLetterPage{}, wrapErr("list dead", err)
	}
	page, err := outboxsql.DeadPage(rows, limit, datetime)
	if q.Newest {
		page = page.Newest()
	}
	return page, wrapErr("list dead", err)
}

// DeadPayload reads at most max bytes of one dead row's payload, cut in its
// SQL.
func (s *Store) DeadPayload(ctx context.Context, id reliar.MessageID, max int) (outboxdriver.DeadPayload, error) {
	p := outboxdriver.DeadPayload{ID: id}
	found, err := outboxsql.ScanDeadPayload(s.db.QueryRowContext(ctx, deadPayload, outboxdriver.EffectivePayloadCap(max), id.String()), &p)
	if err != nil {
		return outboxdriver.DeadPayload{}, wrapErr("dead payload", err)
	}
	if !found {
		return outboxdriver.DeadPayload{}, fmt.Errorf("mysqlstore: dead payload %s: %w", id, outboxdriver.ErrNotDead)
	}
	return p, nil
}

// RetryDead makes dead rows due now: dead_at, dead_reason and the lease
// cleared, attempts and lapsed claims reset, last_error kept, an expires_at
// already past cleared. Ids of rows that are not dead are ignored.
func (s *Store) RetryDead(ctx context.Context, ids []reliar.MessageID) (int64, error) {
	return s.byIDs(ctx, "retry dead", `UPDATE outbox SET
	    dead_at = NULL, dead_reason = NULL,
	    locked_by = NULL, locked_until = NULL, lease_token = NULL,
	    available_at = UTC_TIMESTAMP(6),
	    attempts = 0,
	    lapsed_claims = 0,
	    expires_at = CASE WHEN expires_at <= UTC_TIMESTAMP(6) THEN NULL ELSE expires_at END,
	    updated_at = UTC_TIMESTAMP(6)
	WHERE dead_at IS NOT NULL AND id IN `, ids)
}

// PurgeDead deletes dead rows. Ids of rows that are not dead are ignored.
func (s *Store) PurgeDead(ctx context.Context, ids []reliar.MessageID) (int64, error) {
	return s.byIDs(ctx, "purge dead", `DELETE FROM outbox WHERE dead_at IS NOT NULL AND id IN `, ids)
}

// byIDs runs prefix followed by an IN list of ids, in chunks, and returns the
// rows affected in all.
func (s *Store) byIDs(ctx context.Context, op, prefix string, ids []reliar.MessageID) (int64, error) {
	var total int64
	for start := 0; start < len(ids); start += idChunk {
		chunk := ids[start:min(start+idChunk, len(ids))]
		args := make([]any, len(chunk))
		for i, id := range chunk {
			args[i] = id.String()
		}
		n, err := s.exec(ctx, op, prefix+"("+placeholders(len(chunk))+")", args...)
		total += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// placeholders returns n comma-separated question marks.
func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?,", n), ",")
}
