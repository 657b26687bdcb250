package pgstore

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// ListDead returns one page of dead rows ordered by sequence; rows that cannot
// be decoded come back in Poisoned. NextAfterSequence is the largest sequence
// scanned, set only when the page was full.
func (s *Store) ListDead(ctx context.Context, q outboxdriver.DeadQuery) (outboxdriver.DeadLetterPage, error) {
	limit := q.EffectiveLimit()
	var deadBefore pgtype.Timestamptz
	if !q.DeadBefore.IsZero() {
		deadBefore = pgtype.Timestamptz{Time: q.DeadBefore, Valid: true}
	}
	var (
		page    outboxdriver.DeadLetterPage
		scanned int
		last    int64
	)
	b := s.newBatch(adminTx)
	b.Queue(s.sql.listDead, q.MessageType, q.TenantID, deadBefore, q.AfterSequence, limit)
	err := s.send(ctx, b, func(br pgx.BatchResults) error {
		rows, err := br.Query()
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				row       outboxdriver.Row
				reason    string
				deadAt    time.Time
				lastError *string
			)
			dest, finish := rowDest(&row)
			if err := rows.Scan(append(dest, &reason, &deadAt, &lastError)...); err != nil {
				return err
			}
			finish()
			scanned++
			last = max(last, row.Sequence)
			env, err := row.Envelope()
			if err != nil {
				page.Poisoned = append(page.Poisoned, outboxdriver.PoisonedRecord{ID: row.ID, Sequence: row.Sequence, Error: err.Error()})
				continue
			}
			rec := outboxdriver.DeadRecord{Envelope: env, DeadReason: outboxdriver.DeadReason(reason), DeadAt: deadAt, Attempts: row.Attempts}
			if lastError != nil {
				rec.LastError = *lastError
			}
			page.Records = append(page.Records, rec)
		}
		return rows.Err()
	})
	if err != nil {
		return outboxdriver.DeadLetterPage{}, wrapErr("list dead", err)
	}
	if scanned == limit {
		page.NextAfterSequence = &last
	}
	return page, nil
}

// RetryDead makes dead rows due now with attempts and lapsed claims reset,
// keeping last_error and clearing an expiry already past. Rows that are not
// dead are left alone and not counted.
func (s *Store) RetryDead(ctx context.Context, ids []reliar.MessageID) (int64, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	return s.exec(ctx, adminTx, "retry dead", s.sql.retryDead, uuidArray(ids))
}

// PurgeDead deletes dead rows. Rows that are not dead are left alone and not
// counted.
func (s *Store) PurgeDead(ctx context.Context, ids []reliar.MessageID) (int64, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	return s.exec(ctx, adminTx, "purge dead", s.sql.deleteDead, uuidArray(ids))
}

func uuidArray(ids []reliar.MessageID) []pgtype.UUID {
	out := make([]pgtype.UUID, len(ids))
	for i, id := range ids {
		out[i] = pgtype.UUID{Bytes: id, Valid: true}
	}
	return out
}
