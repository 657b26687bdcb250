package pgstore

import (
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// envelopeColumns are the columns decoded into an outboxdriver.Row, in the order of
// rowDest.
var envelopeColumns = []string{
	"id", "sequence", "message_type", "message_version", "correlation_id",
	"conversation_id", "causation_id", "request_id", "content_type", "payload",
	"tenant_id", "expires_at", "ordering_key", "metadata", "headers",
	"metadata_version", "created_at", "available_at", "attempts",
}

// rowDest returns scan destinations for envelopeColumns.
//
// The uuid columns scan into pgtype.UUID, which decodes the binary format
// directly (uuid.UUID would go through sql.Scanner and a text round trip,
// a measurable share of a claim's CPU); call finish after Scan.
func rowDest(r *outboxdriver.Row) (dest []any, finish func()) {
	var id, conv, cause, req pgtype.UUID
	dest = []any{
		&id, &r.Sequence, &r.MessageType, &r.MessageVersion, &r.CorrelationID,
		&conv, &cause, &req, &r.ContentType, &r.Payload,
		&r.TenantID, &r.ExpiresAt, &r.OrderingKey, &r.Metadata, &r.Headers,
		&r.MetadataVersion, &r.CreatedAt, &r.AvailableAt, &r.Attempts,
	}
	return dest, func() {
		r.ID = id.Bytes
		r.ConversationID, r.CausationID, r.RequestID = uuidPtr(conv), uuidPtr(cause), uuidPtr(req)
	}
}

// uuidPtr converts a nullable uuid column.
func uuidPtr(u pgtype.UUID) *uuid.UUID {
	if !u.Valid {
		return nil
	}
	id := uuid.UUID(u.Bytes)
	return &id
}

// listedColumns are envelopeColumns as a dead-letter listing reads them: no
// payload, and at most a character more than the listing keeps of the
// metadata and headers documents.
func listedColumns() string {
	doc := func(c string) string {
		return "left(" + c + "::text, " + strconv.Itoa(outboxdriver.ListedDocumentBytes+1) + ")"
	}
	cols := make([]string, len(envelopeColumns))
	for i, c := range envelopeColumns {
		switch c {
		case "payload":
			cols[i] = "NULL::bytea"
		case "metadata", "headers":
			cols[i] = doc(c)
		default:
			cols[i] = c
		}
	}
	return strings.Join(cols, ", ")
}

// columnList joins envelopeColumns, each prefixed with prefix (an alias and
// a dot, or nothing).
func columnList(prefix string) string {
	cols := make([]string, len(envelopeColumns))
	for i, c := range envelopeColumns {
		cols[i] = prefix + c
	}
	return strings.Join(cols, ", ")
}

// statements are the store's SQL, rendered once for its schema.
type statements struct {
	enqueue, enqueueLeased                         string
	claimUnordered, claimPerKey, poison            string
	claimAfter, claimPerKeyAfter                   string
	claimFair, fairCursor, tenantStats             string
	complete, fail, release, extend                string
	purgePublished, purgeDead, purgeExpired, stats string
	listDead, deadPayload, retryDead, deleteDead   string
	listDeadNewest                                 string
	markProcessed, purgeProcessed                  string
}

// leaseCleared is the SET list that clears a lease.
const leaseCleared = `locked_by = NULL, locked_until = NULL, lease_token = NULL`

// The counters (attempts, claim_count, lapsed_claims) saturate at the top of
// integer: a row a plain-SQL producer wrote with a counter there must not
// make the claim or outcome write of its whole batch fail with an integer
// overflow. least(x, 2147483646) + 1 never exceeds 2147483647.

// pending is the predicate of a row neither published nor dead.
const pending = `published_at IS NULL AND dead_at IS NULL`

// The enqueue statement inserts any number of rows from parallel arrays in
// one round trip, then notifies the table's channel, $1, unless it is empty. The
// notification is delivered when the caller's transaction commits.
const enqueueSQL = `WITH ins AS (
    INSERT INTO {{table}} (id, message_type, message_version, correlation_id,
        conversation_id, causation_id, request_id, content_type, payload,
        tenant_id, expires_at, ordering_key, metadata, headers, metadata_version,
        available_at)
    SELECT u.id, u.message_type, u.message_version, u.correlation_id,
        u.conversation_id, u.causation_id, u.request_id, u.content_type, u.payload,
        u.tenant_id, u.expires_at, u.ordering_key, u.metadata, u.headers,
        u.metadata_version, coalesce(u.available_at, now())
    FROM unnest($2::uuid[], $3::text[], $4::int4[], $5::text[], $6::uuid[],
        $7::uuid[], $8::uuid[], $9::text[], $10::bytea[], $11::text[],
        $12::timestamptz[], $13::text[], $14::jsonb[], $15::jsonb[], $16::int4[],
        $17::timestamptz[]) WITH ORDINALITY
        AS u(id, message_type, message_version, correlation_id, conversation_id,
        causation_id, request_id, content_type, payload, tenant_id, expires_at,
        ordering_key, metadata, headers, metadata_version, available_at, ord)
    ORDER BY u.ord
)
SELECT pg_notify(c.ch, '') FROM (VALUES ($1::text)) AS c(ch) WHERE c.ch <> ''`

// The enqueue of the zero-claim path (WithHandoff): the enqueue statement's
// rows, each already leased to the local dispatcher ($18 worker, $19 lease
// in microseconds from the database's clock at the statement, not the
// transaction's start, $20 the rows' lease tokens), and one notification
// whose payload, $21, names the enqueue: its delivery after the commit is
// the proof the hand-off waits for. It returns each row's sequence and
// creation time, which the handed-over envelope carries.
const enqueueLeasedSQL = `WITH ins AS (
    INSERT INTO {{table}} (id, message_type, message_version, correlation_id,
        conversation_id, causation_id, request_id, content_type, payload,
        tenant_id, expires_at, ordering_key, metadata, headers, metadata_version,
        available_at, locked_by, locked_until, lease_token, claim_count, last_claimed_at)
    SELECT u.id, u.message_type, u.message_version, u.correlation_id,
        u.conversation_id, u.causation_id, u.request_id, u.content_type, u.payload,
        u.tenant_id, u.expires_at, u.ordering_key, u.metadata, u.headers,
        u.metadata_version, coalesce(u.available_at, now()), $18::text,
        clock_timestamp() + $19::int8 * interval '1 microsecond', u.token, 1, clock_timestamp()
    FROM unnest($2::uuid[], $3::text[], $4::int4[], $5::text[], $6::uuid[],
        $7::uuid[], $8::uuid[], $9::text[], $10::bytea[], $11::text[],
        $12::timestamptz[], $13::text[], $14::jsonb[], $15::jsonb[], $16::int4[],
        $17::timestamptz[], $20::uuid[]) WITH ORDINALITY
        AS u(id, message_type, message_version, correlation_id, conversation_id,
        causation_id, request_id, content_type, payload, tenant_id, expires_at,
        ordering_key, metadata, headers, metadata_version, available_at, token, ord)
    ORDER BY u.ord
    RETURNING id, sequence, created_at
), proof AS MATERIALIZED (
    SELECT pg_notify($1::text, $21::text)
)
SELECT i.id, i.sequence, i.created_at FROM ins i CROSS JOIN proof`

// The claim: a CTE that locks due rows with SKIP LOCKED feeding an UPDATE
// that leases them (or, past MaxClaims, kills them) and returns them. Only a
// lapsed reclaim (the row still carries a lease) counts against MaxClaims:
// a row handed back by a release or a retry is claimed as usual. The
// lock is released when the statement's implicit transaction commits, before
// Acquire returns. $1 batch size, $2 worker, $3 lease in microseconds, $4
// MaxClaims (0 disables). %PERKEY% is replaced by the per-key predicate or
// nothing.
const claimSQL = `WITH due AS MATERIALIZED (
    SELECT c.id, c.last_claimed_at AS prev_claimed_at,
        (c.locked_until IS NOT NULL) AS reclaimed,
        (c.locked_until IS NOT NULL AND $4::int4 > 0 AND c.lapsed_claims >= $4::int4) AS exhausted
    FROM {{table}} c
    WHERE c.published_at IS NULL AND c.dead_at IS NULL
      AND c.available_at <= now()
      AND (c.locked_until IS NULL OR c.locked_until <= now())
      AND (c.expires_at IS NULL OR c.expires_at > now())%PERKEY%
    ORDER BY c.available_at, c.sequence
    LIMIT $1
    FOR UPDATE SKIP LOCKED
)
` + claimUpdateSQL

// claimUpdateSQL leases (or, past MaxClaims, kills) the rows of the CTE due
// and returns them; the unfair and the fair claims share it.
const claimUpdateSQL = `UPDATE {{table}} o SET
    locked_by       = CASE WHEN due.exhausted THEN NULL ELSE $2::text END,
    locked_until    = CASE WHEN due.exhausted THEN NULL ELSE now() + $3::int8 * interval '1 microsecond' END,
    lease_token     = CASE WHEN due.exhausted THEN NULL ELSE gen_random_uuid() END,
    claim_count     = least(o.claim_count, 2147483646) + CASE WHEN due.exhausted THEN 0 ELSE 1 END,
    lapsed_claims   = least(o.lapsed_claims, 2147483646) + CASE WHEN due.reclaimed AND NOT due.exhausted THEN 1 ELSE 0 END,
    last_claimed_at = CASE WHEN due.exhausted THEN o.last_claimed_at ELSE now() END,
    dead_at         = CASE WHEN due.exhausted THEN now() END,
    dead_reason     = CASE WHEN due.exhausted THEN 'max_claims' END,
    last_error      = CASE WHEN due.exhausted
                      THEN 'lease lapsed ' || o.lapsed_claims || ' times without an outcome'
                      ELSE o.last_error END,
    updated_at      = now()
FROM due
WHERE o.id = due.id
RETURNING ` + "%COLUMNS%" + `, o.lease_token, o.claim_count, o.lapsed_claims,
    due.reclaimed, due.prev_claimed_at, due.exhausted`

// afterSQL restricts the claim to rows after AcquireRequest.After, $5 and
// $6: a row comparison the pending index's scan starts from, so that the
// rows leased by the claims before it are not visited again.
const afterSQL = `
      AND (c.available_at, c.sequence) > ($5::timestamptz, $6::int8)`

// perKeySQL restricts the claim to rows without a key and to the head row of
// each key: no older pending row of the key may exist, unless it expired
// and is not leased (it can never be published). Keyed rows must also be
// older than every running transaction, so that a row whose transaction
// commits late is never overtaken.
const perKeySQL = `
      AND (c.ordering_key IS NULL OR (
          c.xid < pg_snapshot_xmin(pg_current_snapshot())
          AND NOT EXISTS (
              SELECT 1 FROM {{table}} h
              WHERE h.ordering_key = c.ordering_key
                AND h.published_at IS NULL AND h.dead_at IS NULL
                AND h.sequence < c.sequence
                AND (h.expires_at IS NULL OR h.expires_at > now() OR h.locked_until > now()))))`

// poisonSQL moves the undecodable rows of a claim to dead, fenced by their
// fresh tokens, and takes the claim back from their bookkeeping (claim
// count, lapsed claims, last claimed at), as the stores that decode before
// they lease never count it: a row that was never handed out was not
// claimed.
const poisonSQL = `UPDATE {{table}} o SET
    dead_at = now(), dead_reason = 'undecodable', last_error = u.err,
    claim_count = greatest(o.claim_count - 1, 0),
    lapsed_claims = greatest(o.lapsed_claims - u.lapsed, 0),
    last_claimed_at = u.prev,
    ` + leaseCleared + `, updated_at = now()
FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::int4[], $5::timestamptz[]) AS u(id, token, err, lapsed, prev)
WHERE o.id = u.id AND o.lease_token = u.token`

const completeSQL = `UPDATE {{table}} o SET
    published_at = now(), attempts = least(o.attempts, 2147483646) + 1,
    ` + leaseCleared + `, updated_at = now()
FROM unnest($1::uuid[], $2::uuid[]) AS u(id, token)
WHERE o.id = u.id AND o.lease_token = u.token`

// failSQL records retries (reason NULL) and deaths in one statement.
const failSQL = `UPDATE {{table}} o SET
    attempts     = least(o.attempts, 2147483646) + 1,
    last_error   = u.err,
    available_at = CASE WHEN u.reason IS NULL
                   THEN now() + u.delay_us * interval '1 microsecond'
                   ELSE o.available_at END,
    dead_at      = CASE WHEN u.reason IS NULL THEN NULL ELSE now() END,
    dead_reason  = u.reason,
    ` + leaseCleared + `, updated_at = now()
FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::int8[], $5::text[])
    AS u(id, token, err, delay_us, reason)
WHERE o.id = u.id AND o.lease_token = u.token`

// completeDeleteSQL is completeSQL for WithDeleteOnComplete: the published
// row is deleted, fenced the same way.
const completeDeleteSQL = `DELETE FROM {{table}} o
USING unnest($1::uuid[], $2::uuid[]) AS u(id, token)
WHERE o.id = u.id AND o.lease_token = u.token`

const releaseSQL = `UPDATE {{table}} o SET ` + leaseCleared + `, updated_at = now()
FROM unnest($1::uuid[], $2::uuid[]) AS u(id, token)
WHERE o.id = u.id AND o.lease_token = u.token`

const extendSQL = `UPDATE {{table}} o SET
    locked_until = now() + $3::int8 * interval '1 microsecond', updated_at = now()
FROM unnest($1::uuid[], $2::uuid[]) AS u(id, token)
WHERE o.id = u.id AND o.lease_token = u.token`

// The purge statements: each bounded by its LIMIT, the batch chosen once
// in a materialized CTE, and each outer statement repeating the CTE's
// predicate, so that a row changed between the choice and the write is left
// alone.
const purgePublishedSQL = `WITH batch AS MATERIALIZED (
    SELECT id FROM {{table}}
    WHERE published_at IS NOT NULL AND published_at < now() - $1::int8 * interval '1 microsecond'
    ORDER BY published_at LIMIT $2 FOR UPDATE SKIP LOCKED)
DELETE FROM {{table}} o USING batch
WHERE o.id = batch.id
  AND o.published_at IS NOT NULL AND o.published_at < now() - $1::int8 * interval '1 microsecond'`

const purgeDeadSQL = `WITH batch AS MATERIALIZED (
    SELECT id FROM {{table}}
    WHERE dead_at IS NOT NULL AND dead_at < now() - $1::int8 * interval '1 microsecond'
    ORDER BY dead_at LIMIT $2 FOR UPDATE SKIP LOCKED)
DELETE FROM {{table}} o USING batch
WHERE o.id = batch.id
  AND o.dead_at IS NOT NULL AND o.dead_at < now() - $1::int8 * interval '1 microsecond'`

const purgeExpiredSQL = `WITH batch AS MATERIALIZED (
    SELECT id FROM {{table}}
    WHERE expires_at <= now() AND ` + pending + `
      AND (locked_until IS NULL OR locked_until <= now())
    ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED)
UPDATE {{table}} o SET
    dead_at = now(), dead_reason = 'expired',
    last_error = coalesce(o.last_error, 'expired before publication'),
    ` + leaseCleared + `, updated_at = now()
FROM batch
WHERE o.id = batch.id
  AND o.expires_at <= now() AND o.published_at IS NULL AND o.dead_at IS NULL
  AND (o.locked_until IS NULL OR o.locked_until <= now())`

// statsSQL partitions the pending rows (read through the pending partial
// index) and counts dead rows (through the dead partial index).
const statsSQL = `SELECT
    count(*) FILTER (WHERE locked_until > now()),
    count(*) FILTER (WHERE NOT coalesce(locked_until > now(), false)
        AND expires_at <= now()),
    count(*) FILTER (WHERE NOT coalesce(locked_until > now(), false)
        AND NOT coalesce(expires_at <= now(), false) AND available_at > now()),
    count(*) FILTER (WHERE NOT coalesce(locked_until > now(), false)
        AND NOT coalesce(expires_at <= now(), false) AND available_at <= now()),
    min(available_at) FILTER (WHERE NOT coalesce(locked_until > now(), false)
        AND NOT coalesce(expires_at <= now(), false) AND available_at <= now()),
    (SELECT count(*) FROM {{table}} WHERE dead_at IS NOT NULL),
    now()
FROM {{table}}
WHERE ` + pending

// listDeadSQL never reads a payload (its length only) and reads at most a
// character more than a listing keeps of metadata, headers and last_error,
// so that a page's memory is bounded whatever the rows hold.
const listDeadSQL = `SELECT ` + "%COLUMNS%" + `, octet_length(payload), dead_reason, dead_at,
    left(last_error, ` + "%LASTERROR%" + `)
FROM {{table}}
WHERE dead_at IS NOT NULL
  AND ($1::text = '' OR message_type = $1::text)
  AND ($2::text = '' OR tenant_id = $2::text)
  AND ($3::timestamptz IS NULL OR dead_at < $3::timestamptz)
  AND sequence > $4::int8
ORDER BY sequence
LIMIT $5`

// listDeadNewestSQL is listDeadSQL for a Newest listing: newest first,
// from a cursor $4 the rows come before.
var listDeadNewestSQL = strings.Replace(listDeadSQL, "AND sequence > $4::int8\nORDER BY sequence", "AND sequence < $4::int8\nORDER BY sequence DESC", 1)

// deadPayloadSQL reads at most $2 bytes of one dead row's payload.
const deadPayloadSQL = `SELECT sequence, message_type, content_type, substring(payload FROM 1 FOR $2::int), octet_length(payload)
FROM {{table}}
WHERE id = $1::uuid AND dead_at IS NOT NULL`

const retryDeadSQL = `UPDATE {{table}} SET
    dead_at = NULL, dead_reason = NULL, ` + leaseCleared + `,
    available_at = now(), attempts = 0, lapsed_claims = 0,
    expires_at = CASE WHEN expires_at <= now() THEN NULL ELSE expires_at END,
    updated_at = now()
WHERE id = ANY($1::uuid[]) AND dead_at IS NOT NULL`

const deleteDeadSQL = `DELETE FROM {{table}} WHERE id = ANY($1::uuid[]) AND dead_at IS NOT NULL`

func newStatements(n names, cfg config) statements {
	cols := strings.NewReplacer("%COLUMNS%", columnList("o."))
	claim := cols.Replace(claimSQL)
	complete := completeSQL
	if cfg.deleteOnComplete {
		complete = completeDeleteSQL
	}
	return statements{
		enqueue:          n.render(enqueueSQL),
		enqueueLeased:    n.render(enqueueLeasedSQL),
		claimUnordered:   n.render(strings.Replace(claim, "%PERKEY%", "", 1)),
		claimAfter:       n.render(strings.Replace(claim, "%PERKEY%", afterSQL, 1)),
		claimPerKeyAfter: n.render(strings.Replace(claim, "%PERKEY%", afterSQL+perKeySQL, 1)),
		claimPerKey:      n.render(strings.Replace(claim, "%PERKEY%", perKeySQL, 1)),
		claimFair:        n.render(strings.Replace(cols.Replace(fairClaimSQL), "FROM due\n", "FROM due CROSS JOIN fair\n", 1)),
		fairCursor:       n.render(fairCursorSQL),
		tenantStats:      n.render(tenantStatsSQL),
		poison:           n.render(poisonSQL),
		complete:         n.render(complete),
		fail:             n.render(failSQL),
		release:          n.render(releaseSQL),
		extend:           n.render(extendSQL),
		purgePublished:   n.render(purgePublishedSQL),
		purgeDead:        n.render(purgeDeadSQL),
		purgeExpired:     n.render(purgeExpiredSQL),
		stats:            n.render(statsSQL),
		listDead: n.render(strings.NewReplacer("%COLUMNS%", listedColumns(),
			"%LASTERROR%", strconv.Itoa(outboxdriver.ListedLastErrorBytes+1)).Replace(listDeadSQL)),
		listDeadNewest: n.render(strings.NewReplacer("%COLUMNS%", listedColumns(),
			"%LASTERROR%", strconv.Itoa(outboxdriver.ListedLastErrorBytes+1)).Replace(listDeadNewestSQL)),
		deadPayload:    n.render(deadPayloadSQL),
		retryDead:      n.render(retryDeadSQL),
		deleteDead:     n.render(deleteDeadSQL),
		markProcessed:  n.render(markProcessedSQL),
		purgeProcessed: n.render(purgeProcessedSQL),
	}
}
