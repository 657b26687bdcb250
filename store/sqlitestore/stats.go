package sqlitestore

import (
	"context"

	"github.com/reliar/reliar/outbox/outboxdriver"
)

// statsQuery partitions the pending rows (read through ix_outbox_pending)
// and counts the dead ones (through ix_outbox_dead); ?1 is now.
const statsQuery = `SELECT
	    count(*) FILTER (WHERE locked_until > ?1),
	    count(*) FILTER (WHERE (locked_until IS NULL OR locked_until <= ?1)
	                       AND expires_at <= ?1),
	    count(*) FILTER (WHERE (locked_until IS NULL OR locked_until <= ?1)
	                       AND (expires_at IS NULL OR expires_at > ?1)
	                       AND available_at > ?1),
	    count(*) FILTER (WHERE (locked_until IS NULL OR locked_until <= ?1)
	                       AND (expires_at IS NULL OR expires_at > ?1)
	                       AND available_at <= ?1),
	    min(available_at) FILTER (WHERE (locked_until IS NULL OR locked_until <= ?1)
	                       AND (expires_at IS NULL OR expires_at > ?1)
	                       AND available_at <= ?1),
	    (SELECT count(*) FROM outbox WHERE dead_at IS NOT NULL)
	FROM outbox INDEXED BY ix_outbox_pending
	WHERE published_at IS NULL AND dead_at IS NULL`

// Stats counts the rows by state in one statement, as of the store's clock.
func (s *Store) Stats(ctx context.Context) (outboxdriver.Stats, error) {
	now := s.now()
	st := outboxdriver.Stats{AsOf: now}
	var oldest *int64
	err := s.db.QueryRowContext(ctx, statsQuery, toMicros(now)).Scan(
		&st.Leased, &st.ExpiredPending, &st.Scheduled, &st.Due, &oldest, &st.Dead)
	if err != nil {
		return outboxdriver.Stats{}, wrapErr("stats", err)
	}
	st.Pending = st.Leased + st.ExpiredPending + st.Scheduled + st.Due
	if oldest != nil {
		st.OldestDueAge = max(now.Sub(fromMicros(*oldest)), 0)
	}
	return st, nil
}
