package pgstore

import (
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// On a realistic table (100k rows, most of them published), the claims walk
// the pending partial indexes instead of scanning the table.
func TestClaimUsesPendingIndex(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := t.Context()
	fill := s.n.render(`INSERT INTO {{table}} (id, message_type, payload, ordering_key, published_at, available_at)
SELECT gen_random_uuid(), 'bulk', '\x7b7d',
    CASE WHEN g % 3 = 0 THEN 'key-' || (g % 500) END,
    CASE WHEN g % 20 <> 0 THEN now() END,
    now() - (g || ' milliseconds')::interval
FROM generate_series(1, 100000) AS g`)
	if _, err := sharedPool.Exec(ctx, fill); err != nil {
		t.Fatal(err)
	}
	if _, err := sharedPool.Exec(ctx, s.n.render(`ANALYZE {{table}}`)); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, sql string
		args      []any
		want      []string
	}{
		{"unordered claim", s.sql.claimUnordered, []any{100, "w", int64(30e6), int32(5)}, []string{"outbox_pending_idx"}},
		{"per-key claim", s.sql.claimPerKey, []any{100, "w", int64(30e6), int32(5)}, []string{"outbox_pending_idx", "outbox_pending_key_idx"}},
		{"stats", s.sql.stats, nil, []string{"outbox_pending_idx", "outbox_dead_idx"}},
	}
	for _, tt := range tests {
		rows, err := sharedPool.Query(ctx, "EXPLAIN "+tt.sql, tt.args...)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		plan := strings.Join(lines, "\n")
		t.Logf("%s:\n%s", tt.name, plan)
		for _, idx := range tt.want {
			if !strings.Contains(plan, idx) {
				t.Errorf("%s does not use %s:\n%s", tt.name, idx, plan)
			}
		}
		if strings.Contains(plan, "Seq Scan") {
			t.Errorf("%s scans the table:\n%s", tt.name, plan)
		}
	}
}
