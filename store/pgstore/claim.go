package pgstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// Acquire claims up to req.BatchSize due rows in one statement (see the
// contract in package outbox). Rows whose lapsed claims reached
// req.MaxClaims are moved to dead instead; rows that cannot be decoded are
// moved to dead by a second statement fenced by their fresh lease tokens.
func (s *Store) Acquire(ctx context.Context, req outboxdriver.AcquireRequest) (outboxdriver.AcquiredBatch, error) {
	if req.BatchSize <= 0 {
		return outboxdriver.AcquiredBatch{}, reliar.Permanent(fmt.Errorf("pgstore: acquire: BatchSize must be positive, got %d", req.BatchSize))
	}
	if req.Lease <= 0 {
		return outboxdriver.AcquiredBatch{}, reliar.Permanent(fmt.Errorf("pgstore: acquire: Lease must be positive, got %s", req.Lease))
	}
	fair := req.Fairness == outboxdriver.FairnessTenant
	var batch outboxdriver.AcquiredBatch
	var poison poisonSet
	b := s.newBatch(dispatchTx)
	switch {
	case fair && req.Ordering == outboxdriver.PerKey:
		return batch, reliar.Permanent(fmt.Errorf("pgstore: acquire: FairnessTenant cannot be combined with PerKey ordering"))
	case fair:
		held, counts := tenantHeldArgs(req.TenantHeld)
		b.Queue(s.sql.claimFair, req.BatchSize, req.Worker, micros(req.Lease), int32(max(req.MaxClaims, 0)),
			req.TenantCursor, int32(max(req.TenantCap, 0)), held, counts)
		batch.TenantCursor = req.TenantCursor
	case req.After != nil:
		claim := s.sql.claimAfter
		if req.Ordering == outboxdriver.PerKey {
			claim = s.sql.claimPerKeyAfter
		}
		b.Queue(claim, req.BatchSize, req.Worker, micros(req.Lease), int32(max(req.MaxClaims, 0)),
			req.After.AvailableAt, req.After.Sequence)
	case req.Ordering == outboxdriver.PerKey:
		b.Queue(s.sql.claimPerKey, req.BatchSize, req.Worker, micros(req.Lease), int32(max(req.MaxClaims, 0)))
	default:
		b.Queue(s.sql.claimUnordered, req.BatchSize, req.Worker, micros(req.Lease), int32(max(req.MaxClaims, 0)))
	}
	err := s.send(ctx, b, func(br pgx.BatchResults) error {
		rows, err := br.Query()
		if err != nil {
			return err
		}
		defer rows.Close()
		batch.Records = make([]outboxdriver.Record, 0, req.BatchSize)
		scanner := newClaimScanner()
		if fair {
			scanner = newFairClaimScanner()
		}
		var row outboxdriver.Row
		var rec outboxdriver.Record
		for rows.Next() {
			if err := scanner.scan(rows, &row, &rec); err != nil {
				return err
			}
			if fair {
				batch.TenantCursor, batch.More = scanner.cursor.String, scanner.more
			}
			if scanner.exhausted {
				batch.DeadMaxClaims = append(batch.DeadMaxClaims, row.ID)
				continue
			}
			env, err := row.Envelope()
			if err != nil {
				batch.Poisoned = append(batch.Poisoned, outboxdriver.PoisonedRecord{ID: row.ID, Sequence: row.Sequence, Error: err.Error()})
				poison.add(row.ID, &rec, err)
				continue
			}
			rec.Envelope = env
			batch.Records = append(batch.Records, rec)
		}
		return rows.Err()
	})
	if err != nil {
		return outboxdriver.AcquiredBatch{}, wrapErr("acquire", err)
	}
	if fair && batch.Len() == 0 {
		// No row carried the cursor: read where the round ended, so that
		// the next claim goes on from there (tenants at their cap, or
		// with leased rows only, are passed over, not visited again).
		cb := s.newBatch(dispatchTx)
		cb.Queue(s.sql.fairCursor, req.BatchSize, req.TenantCursor)
		var cursor pgtype.Text
		err := s.send(ctx, cb, func(br pgx.BatchResults) error {
			if err := br.QueryRow().Scan(&cursor); err != nil && !errors.Is(err, pgx.ErrNoRows) {
				return err
			}
			return nil
		})
		if err != nil {
			return outboxdriver.AcquiredBatch{}, wrapErr("acquire", err)
		}
		if cursor.Valid {
			batch.TenantCursor = cursor.String
		}
	}
	// UPDATE … RETURNING has no order; restore the claim's.
	slices.SortFunc(batch.Records, func(a, b outboxdriver.Record) int {
		return cmp.Or(a.AvailableAt.Compare(b.AvailableAt), cmp.Compare(a.Envelope.Sequence, b.Envelope.Sequence))
	})
	slices.SortFunc(batch.Poisoned, func(a, b outboxdriver.PoisonedRecord) int { return cmp.Compare(a.Sequence, b.Sequence) })
	if len(poison.ids) > 0 {
		affected, err := s.exec(ctx, dispatchTx, "move undecodable rows to dead", s.sql.poison,
			poison.ids, poison.tokens, poison.errs, poison.lapsed, poison.prev)
		if err != nil {
			// The claim stands and its records must be published. The
			// poisoned rows stay leased and come back, still poison, when
			// their lease lapses (bounded by MaxClaims).
			s.log.WarnContext(ctx, "pgstore: could not move undecodable rows to dead; they return when their lease lapses",
				slog.Int("rows", len(poison.ids)), slog.Any("error", err))
			return batch, nil
		}
		s.logShortfall(ctx, "poison sweep", len(poison.ids), affected)
	}
	return batch, nil
}

// poisonSet collects the undecodable rows of one claim, with what the
// claim changed in their bookkeeping.
type poisonSet struct {
	ids, tokens []pgtype.UUID
	errs        []string
	lapsed      []int32
	prev        []pgtype.Timestamptz
}

func (p *poisonSet) add(id reliar.MessageID, rec *outboxdriver.Record, err error) {
	p.ids = append(p.ids, pgtype.UUID{Bytes: id, Valid: true})
	p.tokens = append(p.tokens, pgtype.UUID{Bytes: rec.Token, Valid: true})
	p.errs = append(p.errs, outboxdriver.SanitizeError(err.Error()))
	var lapsed int32
	if rec.Reclaimed {
		lapsed = 1
	}
	p.lapsed = append(p.lapsed, lapsed)
	p.prev = append(p.prev, timestamptz(rec.PrevClaimedAt))
}

// tenantHeldArgs turns the claimer's held rows per tenant into the fair
// claim's parallel arrays.
func tenantHeldArgs(held map[string]int) ([]string, []int32) {
	tenants := make([]string, 0, len(held))
	counts := make([]int32, 0, len(held))
	for t, n := range held {
		tenants = append(tenants, t)
		counts = append(counts, int32(min(n, 1<<30)))
	}
	return tenants, counts
}
