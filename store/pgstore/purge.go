package pgstore

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// defaultPurgeBatch caps each purge statement when the request gives no
// BatchSize.
const defaultPurgeBatch = 1000

// Purge runs one bounded pass of retention and expiry: up to BatchSize
// published rows older than PublishedRetention deleted, up to BatchSize dead
// rows older than DeadRetention deleted (each skipped when nil), and up to
// BatchSize expired pending rows with a free lease moved to dead with reason
// expired. The three statements travel in one round trip and commit
// together. A BatchSize of 0 means 1000.
func (s *Store) Purge(ctx context.Context, req outboxdriver.PurgeRequest) (outboxdriver.PurgeReport, error) {
	limit := req.BatchSize
	if limit <= 0 {
		limit = defaultPurgeBatch
	}
	b := s.newBatch(adminTx)
	if req.PublishedRetention != nil {
		b.Queue(s.sql.purgePublished, micros(max(*req.PublishedRetention, 0)), limit)
	}
	if req.DeadRetention != nil {
		b.Queue(s.sql.purgeDead, micros(max(*req.DeadRetention, 0)), limit)
	}
	b.Queue(s.sql.purgeExpired, limit)
	var report outboxdriver.PurgeReport
	err := s.send(ctx, b, func(br pgx.BatchResults) error {
		for _, dst := range []struct {
			on  bool
			out *int64
		}{
			{req.PublishedRetention != nil, &report.PublishedDeleted},
			{req.DeadRetention != nil, &report.DeadDeleted},
			{true, &report.Expired},
		} {
			if !dst.on {
				continue
			}
			tag, err := br.Exec()
			if err != nil {
				return err
			}
			*dst.out = tag.RowsAffected()
		}
		return nil
	})
	if err != nil {
		return outboxdriver.PurgeReport{}, wrapErr("purge", err)
	}
	return report, nil
}

// Stats partitions the pending rows and counts the dead ones in one
// statement that reads the partial indexes, not the published rows.
func (s *Store) Stats(ctx context.Context) (outboxdriver.Stats, error) {
	var (
		st        outboxdriver.Stats
		oldestDue *time.Time
	)
	b := s.newBatch(adminTx)
	b.Queue(s.sql.stats)
	err := s.send(ctx, b, func(br pgx.BatchResults) error {
		return br.QueryRow().Scan(&st.Leased, &st.ExpiredPending, &st.Scheduled, &st.Due, &oldestDue, &st.Dead, &st.AsOf)
	})
	if err != nil {
		return outboxdriver.Stats{}, wrapErr("stats", err)
	}
	st.Pending = st.Leased + st.ExpiredPending + st.Scheduled + st.Due
	if oldestDue != nil && st.Due > 0 {
		st.OldestDueAge = max(st.AsOf.Sub(*oldestDue), 0)
	}
	return st, nil
}
