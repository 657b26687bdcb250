package rawsql

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/reliar/reliar/bench/internal/payload"
)

// minimalTableSQL creates the minimal table in the run's schema (the
// search_path): a uuid primary key, a bigserial sequence, the three columns
// the producer writes, a lease and a published mark, and one partial index
// of the pending rows in sequence order.
const minimalTableSQL = `CREATE TABLE raw_outbox (
    id           uuid        PRIMARY KEY,
    sequence     bigserial   NOT NULL,
    message_type text        NOT NULL,
    payload      bytea       NOT NULL,
    locked_until timestamptz,
    published_at timestamptz
);
CREATE INDEX raw_outbox_pending_idx ON raw_outbox (sequence) WHERE published_at IS NULL`

// statements is the pinned SQL of one loop. The unqualified table names
// resolve through the run's search_path.
type statements struct {
	claim, complete, pending string
	// envelope: the claim returns the header columns too.
	envelope bool
	// worker: the claim takes the worker's name as $1 (locked_by).
	worker bool
	// insert writes docs in tx.
	insert func(ctx context.Context, tx pgx.Tx, ids []uuid.UUID, docs []payload.Doc) error
}

// messageType is the type of every raw row.
const messageType = "bench.message"

const (
	pgstoreInsertSQL = `INSERT INTO outbox (id, message_type, payload)
SELECT * FROM unnest($1::uuid[], $2::text[], $3::bytea[])`

	pgstoreClaimSQL = `WITH due AS (
    SELECT id FROM outbox
    WHERE published_at IS NULL AND dead_at IS NULL
      AND available_at <= now()
      AND (locked_until IS NULL OR locked_until <= now())
    ORDER BY available_at, sequence
    LIMIT 500
    FOR UPDATE SKIP LOCKED
)
UPDATE outbox o SET locked_by = $1, locked_until = now() + interval '30 seconds',
    lease_token = gen_random_uuid(), claim_count = o.claim_count + 1, last_claimed_at = now()
FROM due WHERE o.id = due.id
RETURNING o.id, o.payload`

	pgstoreCompleteSQL = `UPDATE outbox SET published_at = now(), attempts = attempts + 1,
    locked_by = NULL, locked_until = NULL, lease_token = NULL, updated_at = now()
WHERE id = ANY($1)`

	pgstorePendingSQL = `SELECT count(*) FROM outbox WHERE published_at IS NULL AND dead_at IS NULL`

	// envelopeColumns are what the claim with Envelope returns after id
	// and payload.
	envelopeColumns = `, o.message_type, o.sequence, o.created_at, o.content_type, o.message_version, o.conversation_id`

	minimalClaimSQL = `WITH due AS (
    SELECT id FROM raw_outbox
    WHERE published_at IS NULL
      AND (locked_until IS NULL OR locked_until <= now())
    ORDER BY sequence
    LIMIT 500
    FOR UPDATE SKIP LOCKED
)
UPDATE raw_outbox o SET locked_until = now() + interval '30 seconds'
FROM due WHERE o.id = due.id
RETURNING o.id, o.payload`

	minimalCompleteSQL = `UPDATE raw_outbox SET published_at = now(), locked_until = NULL WHERE id = ANY($1)`

	minimalPendingSQL = `SELECT count(*) FROM raw_outbox WHERE published_at IS NULL`
)

// statementsFor returns l's SQL.
func statementsFor(l Loop) statements {
	if l.Table == MinimalTable {
		return statements{claim: minimalClaimSQL, complete: minimalCompleteSQL, pending: minimalPendingSQL, insert: insertValues}
	}
	q := statements{claim: pgstoreClaimSQL, complete: pgstoreCompleteSQL, pending: pgstorePendingSQL, insert: insertUnnest, worker: true}
	if l.Envelope {
		q.claim += envelopeColumns
		q.envelope = true
	}
	return q
}

// insertUnnest writes docs into pgstore's table with one INSERT of three
// arrays.
func insertUnnest(ctx context.Context, tx pgx.Tx, ids []uuid.UUID, docs []payload.Doc) error {
	types := make([]string, len(docs))
	payloads := make([][]byte, len(docs))
	for i, d := range docs {
		types[i] = messageType
		payloads[i] = d.Encode()
	}
	_, err := tx.Exec(ctx, pgstoreInsertSQL, ids, types, payloads)
	return err
}

// insertValues writes docs into the minimal table with one multi-row
// INSERT … VALUES of three parameters per row.
func insertValues(ctx context.Context, tx pgx.Tx, ids []uuid.UUID, docs []payload.Doc) error {
	args := make([]any, 0, 3*len(docs))
	for i, d := range docs {
		args = append(args, ids[i], messageType, d.Encode())
	}
	_, err := tx.Exec(ctx, valuesSQL(len(docs)), args...)
	return err
}

// valuesSQLs caches the INSERT … VALUES statement of each row count.
var valuesSQLs sync.Map // int → string

// valuesSQL is the minimal table's INSERT of n rows.
func valuesSQL(n int) string {
	if s, ok := valuesSQLs.Load(n); ok {
		return s.(string)
	}
	var b strings.Builder
	b.WriteString("INSERT INTO raw_outbox (id, message_type, payload) VALUES ")
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		p := 3*i + 1
		b.WriteString("($" + strconv.Itoa(p) + ", $" + strconv.Itoa(p+1) + ", $" + strconv.Itoa(p+2) + ")")
	}
	s := b.String()
	valuesSQLs.Store(n, s)
	return s
}

// Enqueue writes docs in one transaction with the table's INSERT.
func (t *target) Enqueue(ctx context.Context, docs []payload.Doc) error {
	ids := make([]uuid.UUID, len(docs))
	for i := range ids {
		ids[i] = uuid.Must(uuid.NewV7())
	}
	err := pgx.BeginFunc(ctx, t.pool, func(tx pgx.Tx) error { return t.q.insert(ctx, tx, ids, docs) })
	if err != nil {
		return fmt.Errorf("rawsql: insert: %w", err)
	}
	return nil
}
