package mysqlstore

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/reliar/reliar/outbox/outboxdriver"
	"github.com/reliar/reliar/outbox/outboxdriver/outboxsql"
)

// dueRows locks up to ?1 claimable rows (pending, available, lease free, not
// expired) in (available_at, sequence) order, skipping rows that other
// claimers hold locked. It reads ix_outbox_pending, which covers pending
// rows only. UTC_TIMESTAMP(6) is constant within a statement.
const dueRows = `SELECT ` + rowColumns + `, locked_by IS NOT NULL, lapsed_claims,
	    last_claimed_at, claim_count, UTC_TIMESTAMP(6)
	FROM outbox
	WHERE pending_available_at <= UTC_TIMESTAMP(6)
	  AND (locked_until IS NULL OR locked_until <= UTC_TIMESTAMP(6))
	  AND (expires_at IS NULL OR expires_at > UTC_TIMESTAMP(6))
	ORDER BY pending_available_at, sequence
	LIMIT ?
	FOR UPDATE SKIP LOCKED`

// killRow moves one locked row to dead, clearing its lease; a NULL
// last_error keeps the row's.
const killRow = `UPDATE outbox SET
	    dead_at = ?, dead_reason = ?, last_error = COALESCE(?, last_error),
	    locked_by = NULL, locked_until = NULL, lease_token = NULL, updated_at = ?
	WHERE sequence = ?`

// leaseChunk is the most rows one lease UPDATE names.
const leaseChunk = 1000

// candidate is a due row locked by Acquire.
type candidate struct {
	raw           rawRow
	lapsed        bool
	lapsedClaims  int
	claimCount    int
	prevClaimedAt *time.Time
	now           time.Time
}

// Acquire claims up to req.BatchSize due rows in (available_at, sequence)
// order in one READ COMMITTED transaction: SELECT … FOR UPDATE SKIP LOCKED
// locks them, rows whose lapsed claims reached req.MaxClaims and rows that
// cannot be decoded go dead, and an UPDATE leases the rest with a fresh
// token each. The row locks end at commit, before Acquire returns.
func (s *Store) Acquire(ctx context.Context, req outboxdriver.AcquireRequest) (outboxdriver.AcquiredBatch, error) {
	var batch outboxdriver.AcquiredBatch
	if req.BatchSize <= 0 {
		return batch, nil
	}
	if req.Lease <= 0 {
		return batch, invalidRequest("acquire", "lease %v is not positive", req.Lease)
	}
	if req.Ordering == outboxdriver.PerKey {
		return batch, invalidRequest("acquire", "per-key ordering is not supported")
	}
	err := s.inTx(ctx, "acquire", func(tx *sql.Tx) error {
		batch = outboxdriver.AcquiredBatch{}
		cands, err := selectCandidates(ctx, tx, req.BatchSize)
		if err != nil || len(cands) == 0 {
			return err
		}
		now := cands[0].now
		var claimed []candidate
		var records []outboxdriver.Record
		for _, c := range cands {
			if c.lapsed && req.MaxClaims > 0 && c.lapsedClaims >= req.MaxClaims {
				if err := kill(ctx, tx, c.raw.Sequence, outboxdriver.DeadMaxClaims, nil, now); err != nil {
					return err
				}
				batch.DeadMaxClaims = append(batch.DeadMaxClaims, c.raw.MessageID())
				continue
			}
			env, err := c.raw.Decode(datetime)
			if err != nil {
				msg := outboxdriver.SanitizeError(err.Error())
				if err := kill(ctx, tx, c.raw.Sequence, outboxdriver.DeadUndecodable, &msg, now); err != nil {
					return err
				}
				batch.Poisoned = append(batch.Poisoned, outboxdriver.PoisonedRecord{
					ID: c.raw.MessageID(), Sequence: c.raw.Sequence, Error: err.Error(),
				})
				continue
			}
			lapsed := 0
			if c.lapsed {
				lapsed = 1
			}
			claimed = append(claimed, c)
			records = append(records, outboxdriver.Record{
				Envelope:      env,
				Token:         uuid.New(),
				Attempts:      int(c.raw.Attempts),
				ClaimCount:    c.claimCount + 1,
				LapsedClaims:  c.lapsedClaims + lapsed,
				Reclaimed:     c.lapsed,
				PrevClaimedAt: c.prevClaimedAt,
				AvailableAt:   c.raw.AvailableAt.UTC(),
			})
		}
		for start := 0; start < len(claimed); start += leaseChunk {
			end := min(start+leaseChunk, len(claimed))
			if err := lease(ctx, tx, req, now, claimed[start:end], records[start:end]); err != nil {
				return err
			}
		}
		batch.Records = records
		return nil
	})
	if err != nil {
		return outboxdriver.AcquiredBatch{}, err
	}
	return batch, nil
}

// inTx runs fn in a READ COMMITTED transaction: it takes no gap locks, so a
// claim or a purge never blocks the application's inserts.
func (s *Store) inTx(ctx context.Context, op string, fn func(tx *sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		return wrapErr(op, err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return wrapErr(op, err)
	}
	return wrapErr(op, tx.Commit())
}

// selectCandidates locks the due rows.
func selectCandidates(ctx context.Context, tx *sql.Tx, limit int) ([]candidate, error) {
	rows, err := tx.QueryContext(ctx, dueRows, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []candidate
	for rows.Next() {
		var c candidate
		var lapsedClaims, claimCount int64
		var prev sql.Null[time.Time]
		if err := c.raw.Scan(rows, &c.lapsed, &lapsedClaims, &prev, &claimCount, &c.now); err != nil {
			return nil, err
		}
		c.lapsedClaims, c.claimCount = int(lapsedClaims), int(claimCount)
		c.prevClaimedAt = datetime.Null(prev)
		out = append(out, c)
	}
	return out, rows.Err()
}

// kill moves one locked row to dead.
func kill(ctx context.Context, tx *sql.Tx, seq int64, reason outboxdriver.DeadReason, lastError *string, now time.Time) error {
	_, err := tx.ExecContext(ctx, killRow, now, string(reason), outboxsql.NullText(lastError), now, seq)
	return err
}

// lease writes the leases of the locked rows cands, whose records carry the
// fresh tokens. lapsed_claims is assigned first: MariaDB evaluates the
// assignments left to right, and it reads locked_by before it is set. The
// counters saturate at the top of INT, so that a value a plain-SQL producer
// wrote there cannot make the claim overflow.
func lease(ctx context.Context, tx *sql.Tx, req outboxdriver.AcquireRequest, now time.Time,
	cands []candidate, records []outboxdriver.Record) error {
	var b strings.Builder
	b.WriteString(`UPDATE outbox SET
	    lapsed_claims = LEAST(lapsed_claims, 2147483646) + (locked_by IS NOT NULL),
	    claim_count = LEAST(claim_count, 2147483646) + 1,
	    locked_by = ?,
	    locked_until = ? + INTERVAL ? MICROSECOND,
	    last_claimed_at = ?,
	    updated_at = ?,
	    lease_token = CASE sequence`)
	args := make([]any, 0, 5+3*len(cands))
	args = append(args, req.Worker, now, micros(req.Lease), now, now)
	for i, c := range cands {
		b.WriteString(" WHEN ? THEN ?")
		args = append(args, c.raw.Sequence, records[i].Token.String())
	}
	b.WriteString(" END WHERE sequence IN (")
	for i, c := range cands {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('?')
		args = append(args, c.raw.Sequence)
	}
	b.WriteByte(')')
	_, err := tx.ExecContext(ctx, b.String(), args...)
	return err
}
