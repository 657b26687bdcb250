package mysqlstore

import (
	"context"
	"database/sql"
	"time"

	"github.com/reliar/reliar/outbox/outboxdriver"
)

// statsQuery partitions the pending rows (read through ix_outbox_pending)
// and counts the dead ones (through ix_outbox_dead), as of the server clock.
const statsQuery = `SELECT
	    COALESCE(SUM(o.locked_until > n.now), 0),
	    COALESCE(SUM((o.locked_until IS NULL OR o.locked_until <= n.now)
	                 AND o.expires_at <= n.now), 0),
	    COALESCE(SUM((o.locked_until IS NULL OR o.locked_until <= n.now)
	                 AND (o.expires_at IS NULL OR o.expires_at > n.now)
	                 AND o.available_at > n.now), 0),
	    COALESCE(SUM((o.locked_until IS NULL OR o.locked_until <= n.now)
	                 AND (o.expires_at IS NULL OR o.expires_at > n.now)
	                 AND o.available_at <= n.now), 0),
	    MIN(CASE WHEN (o.locked_until IS NULL OR o.locked_until <= n.now)
	                 AND (o.expires_at IS NULL OR o.expires_at > n.now)
	                 AND o.available_at <= n.now THEN o.available_at END),
	    (SELECT COUNT(*) FROM outbox WHERE is_dead = 1),
	    MAX(n.now)
	FROM (SELECT UTC_TIMESTAMP(6) AS now) AS n
	LEFT JOIN outbox AS o ON o.pending_available_at IS NOT NULL`

// Stats counts the rows by state in one statement, as of the server clock.
func (s *Store) Stats(ctx context.Context) (outboxdriver.Stats, error) {
	var st outboxdriver.Stats
	var oldest sql.NullTime
	var asOf time.Time
	err := s.db.QueryRowContext(ctx, statsQuery).Scan(
		&st.Leased, &st.ExpiredPending, &st.Scheduled, &st.Due, &oldest, &st.Dead, &asOf)
	if err != nil {
		return outboxdriver.Stats{}, wrapErr("stats", err)
	}
	st.AsOf = asOf.UTC()
	st.Pending = st.Leased + st.ExpiredPending + st.Scheduled + st.Due
	if oldest.Valid {
		st.OldestDueAge = max(st.AsOf.Sub(oldest.Time), 0)
	}
	return st, nil
}
