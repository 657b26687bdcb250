package pgstore

import (
	"context"
	"time"

	"github.com/reliar/reliar/outbox/outboxdriver"
)

var _ outboxdriver.TenantStatser = (*Store)(nil)

// TenantStats returns at most limit tenants with due rows, the oldest due
// row first; rows without a tenant are the tenant "". It reads every due row
// once, so it is meant for operators (reliar stats, the admin page), not for
// a loop.
func (s *Store) TenantStats(ctx context.Context, limit int) ([]outboxdriver.TenantStat, error) {
	if limit <= 0 {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx, s.sql.tenantStats, limit)
	if err != nil {
		return nil, wrapErr("tenant stats", err)
	}
	defer rows.Close()
	var out []outboxdriver.TenantStat
	for rows.Next() {
		var st outboxdriver.TenantStat
		var age int64
		if err := rows.Scan(&st.TenantID, &st.Due, &age); err != nil {
			return nil, wrapErr("tenant stats", err)
		}
		st.OldestDueAge = time.Duration(max(age, 0)) * time.Microsecond
		out = append(out, st)
	}
	if err := rows.Err(); err != nil {
		return nil, wrapErr("tenant stats", err)
	}
	return out, nil
}
