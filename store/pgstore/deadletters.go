package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// ListDead returns one page of dead rows ordered by sequence (descending
// for a Newest listing), without their payloads and with metadata, headers
// and last_error read only up to the listing's caps; rows that cannot be
// decoded come back in Poisoned. The cursor, the last sequence scanned
// (NextBeforeSequence for a Newest listing), is set only when the page was
// full.
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
	query := s.sql.listDead
	if q.Newest {
		query = s.sql.listDeadNewest
	}
	b.Queue(query, q.MessageType, q.TenantID, deadBefore, q.SequenceBound(), limit)
	err := s.send(ctx, b, func(br pgx.BatchResults) error {
		rows, err := br.Query()
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				l         outboxdriver.ListedRow
				reason    string
				lastError *string
			)
			dest, finish := rowDest(&l.Row)
			if err := rows.Scan(append(dest, &l.PayloadSize, &reason, &l.DeadAt, &lastError)...); err != nil {
				return err
			}
			finish()
			scanned++
			last = l.Row.Sequence
			l.DeadReason = outboxdriver.DeadReason(reason)
			if lastError != nil {
				l.LastError = *lastError
			}
			rec, err := l.Record()
			if err != nil {
				page.Poisoned = append(page.Poisoned, outboxdriver.PoisonedRecord{ID: l.Row.ID, Sequence: l.Row.Sequence, Error: err.Error()})
				continue
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
	if q.Newest {
		page = page.Newest()
	}
	return page, nil
}

// DeadPayload reads at most max bytes of one dead row's payload, cut in its
// SQL.
func (s *Store) DeadPayload(ctx context.Context, id reliar.MessageID, max int) (outboxdriver.DeadPayload, error) {
	p := outboxdriver.DeadPayload{ID: id}
	b := s.newBatch(adminTx)
	b.Queue(s.sql.deadPayload, pgtype.UUID{Bytes: id, Valid: true}, outboxdriver.EffectivePayloadCap(max))
	found := false
	err := s.send(ctx, b, func(br pgx.BatchResults) error {
		err := br.QueryRow().Scan(&p.Sequence, &p.MessageType, &p.ContentType, &p.Payload, &p.Size)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		found = err == nil
		return err
	})
	if err != nil {
		return outboxdriver.DeadPayload{}, wrapErr("dead payload", err)
	}
	if !found {
		return outboxdriver.DeadPayload{}, fmt.Errorf("pgstore: dead payload %s: %w", id, outboxdriver.ErrNotDead)
	}
	p.Cut = len(p.Payload) < p.Size
	return p, nil
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
