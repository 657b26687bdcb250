package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/reliar/reliar/outbox/outboxdriver"
	"github.com/reliar/reliar/outbox/outboxdriver/outboxsql"
)

// dueRows selects the claimable rows: pending, available, lease free, not
// expired; ?1 is now, ?2 the limit. It reads ix_outbox_pending in order.
const dueRows = `SELECT ` + rowColumns + `, locked_by IS NOT NULL, lapsed_claims, last_claimed_at
	FROM outbox
	WHERE published_at IS NULL AND dead_at IS NULL
	  AND available_at <= ?1
	  AND (locked_until IS NULL OR locked_until <= ?1)
	  AND (expires_at IS NULL OR expires_at > ?1)`

// headOfKey restricts dueRows to rows without an ordering key and to the
// head of each key: its pending row with the smallest sequence, among those
// that can still be published. A head that is leased or scheduled for a retry
// is not due, so it blocks its key; a head past expires_at without a live
// lease never will be published and blocks nothing (as on PostgreSQL). SQLite lets one writer commit at a time, so sequence order is commit
// order and a late commit never overtakes an earlier one.
const headOfKey = `
	  AND (ordering_key IS NULL OR sequence = (
	      SELECT min(h.sequence) FROM outbox AS h
	      WHERE h.ordering_key = outbox.ordering_key
	        AND h.published_at IS NULL AND h.dead_at IS NULL
	        AND (h.expires_at IS NULL OR h.expires_at > ?1 OR h.locked_until > ?1)))`

const dueOrder = `
	ORDER BY available_at, sequence
	LIMIT ?2`

// claimRows leases the rows named in ?4, a JSON array of [sequence, token]
// pairs. A row that still carries a lapsed lease counts a lapsed claim. The
// counters saturate at the top of INTEGER, so that a value a plain-SQL
// producer wrote there cannot make the claim overflow.
const claimRows = `UPDATE outbox SET
	    locked_by = ?1,
	    locked_until = ?2,
	    lease_token = j.value->>1,
	    claim_count = min(claim_count, 9223372036854775806) + 1,
	    lapsed_claims = min(lapsed_claims, 9223372036854775806) + (locked_by IS NOT NULL),
	    last_claimed_at = ?3,
	    updated_at = ?3
	FROM json_each(?4) AS j
	WHERE outbox.sequence = j.value->>0
	RETURNING sequence, claim_count, lapsed_claims`

// killRows moves the rows named in ?3, a JSON array of [sequence, reason,
// last_error] triples, to dead and clears their lease; a NULL last_error
// keeps the row's.
const killRows = `UPDATE outbox SET
	    dead_at = ?1,
	    dead_reason = j.value->>1,
	    last_error = coalesce(j.value->>2, last_error),
	    locked_by = NULL,
	    locked_until = NULL,
	    lease_token = NULL,
	    updated_at = ?1
	FROM json_each(?2) AS j
	WHERE outbox.sequence = j.value->>0
	  AND outbox.published_at IS NULL AND outbox.dead_at IS NULL`

// candidate is a due row read by Acquire.
type candidate struct {
	raw           rawRow
	lapsed        bool
	lapsedClaims  int
	prevClaimedAt *time.Time
}

// Acquire claims up to req.BatchSize due rows in (available_at, sequence)
// order, in one BEGIN IMMEDIATE transaction: it selects them, moves to dead
// those whose lapsed claims reached req.MaxClaims and those it cannot decode,
// and leases the rest with a fresh token each. No lock is held after it
// returns.
func (s *Store) Acquire(ctx context.Context, req outboxdriver.AcquireRequest) (outboxdriver.AcquiredBatch, error) {
	var batch outboxdriver.AcquiredBatch
	if req.BatchSize <= 0 {
		return batch, nil
	}
	if req.Lease <= 0 {
		return batch, invalidRequest("acquire", "lease %v is not positive", req.Lease)
	}
	query := dueRows
	if req.Ordering == outboxdriver.PerKey {
		query += headOfKey
	}
	query += dueOrder
	err := s.dispatchTx(ctx, "acquire", func(q querier) error {
		batch = outboxdriver.AcquiredBatch{}
		now := s.now()
		cands, err := selectCandidates(ctx, q, query, toMicros(now), req.BatchSize)
		if err != nil {
			return err
		}
		var kills [][3]any
		var claims [][2]any
		records := make(map[int64]*outboxdriver.Record, len(cands))
		order := make([]int64, 0, len(cands))
		for _, c := range cands {
			if c.lapsed && req.MaxClaims > 0 && c.lapsedClaims >= req.MaxClaims {
				kills = append(kills, [3]any{c.raw.Sequence, outboxdriver.DeadMaxClaims, nil})
				batch.DeadMaxClaims = append(batch.DeadMaxClaims, c.raw.MessageID())
				continue
			}
			env, err := c.raw.Decode(micros)
			if err != nil {
				kills = append(kills, [3]any{c.raw.Sequence, outboxdriver.DeadUndecodable, outboxdriver.SanitizeError(err.Error())})
				batch.Poisoned = append(batch.Poisoned, outboxdriver.PoisonedRecord{
					ID: c.raw.MessageID(), Sequence: c.raw.Sequence, Error: err.Error(),
				})
				continue
			}
			token := uuid.New()
			claims = append(claims, [2]any{c.raw.Sequence, token.String()})
			records[c.raw.Sequence] = &outboxdriver.Record{
				Envelope:      env,
				Token:         token,
				Attempts:      int(c.raw.Attempts),
				Reclaimed:     c.lapsed,
				PrevClaimedAt: c.prevClaimedAt,
				AvailableAt:   fromMicros(c.raw.AvailableAt),
			}
			order = append(order, c.raw.Sequence)
		}
		if len(kills) > 0 {
			if _, err := q.ExecContext(ctx, killRows, toMicros(now), outboxsql.JSONArg(kills)); err != nil {
				return wrapErr("acquire", err)
			}
		}
		if len(claims) == 0 {
			return nil
		}
		if err := leaseRows(ctx, q, req, now, claims, records); err != nil {
			return err
		}
		batch.Records = make([]outboxdriver.Record, 0, len(order))
		for _, seq := range order {
			batch.Records = append(batch.Records, *records[seq])
		}
		return nil
	})
	if err != nil {
		return outboxdriver.AcquiredBatch{}, err
	}
	return batch, nil
}

// selectCandidates reads the due rows.
func selectCandidates(ctx context.Context, q querier, query string, now int64, limit int) ([]candidate, error) {
	rows, err := q.QueryContext(ctx, query, now, limit)
	if err != nil {
		return nil, wrapErr("acquire", err)
	}
	defer rows.Close()
	var out []candidate
	for rows.Next() {
		var c candidate
		var lapsedClaims int64
		var prev sql.Null[int64]
		if err := c.raw.Scan(rows, &c.lapsed, &lapsedClaims, &prev); err != nil {
			return nil, wrapErr("acquire", err)
		}
		c.lapsedClaims = int(lapsedClaims)
		c.prevClaimedAt = micros.Null(prev)
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, wrapErr("acquire", err)
	}
	return out, nil
}

// leaseRows writes the leases of claims and fills the records' counters from
// what the update returned.
func leaseRows(ctx context.Context, q querier, req outboxdriver.AcquireRequest, now time.Time,
	claims [][2]any, records map[int64]*outboxdriver.Record) error {
	until := now.Add(req.Lease)
	rows, err := q.QueryContext(ctx, claimRows, req.Worker, toMicros(until), toMicros(now), outboxsql.JSONArg(claims))
	if err != nil {
		return wrapErr("acquire", err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var seq, claimCount, lapsedClaims int64
		if err := rows.Scan(&seq, &claimCount, &lapsedClaims); err != nil {
			return wrapErr("acquire", err)
		}
		if r := records[seq]; r != nil {
			r.ClaimCount = int(claimCount)
			r.LapsedClaims = int(lapsedClaims)
			n++
		}
	}
	if err := rows.Err(); err != nil {
		return wrapErr("acquire", err)
	}
	if n != len(claims) {
		// Impossible inside the immediate transaction that selected them.
		return wrapErr("acquire", fmt.Errorf("leased %d of %d selected rows", n, len(claims)))
	}
	return nil
}
