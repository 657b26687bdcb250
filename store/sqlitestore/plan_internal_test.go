package sqlitestore

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
)

// The hot statements read the partial indexes, never scanning the table
// (which holds every published row until the purge).
func TestQueryPlans(t *testing.T) {
	db, err := Open(filepath.Join(t.TempDir(), "plan.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := Migrate(t.Context(), db); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		query string
		args  []any
		index string
	}{
		{"claim", dueRows + dueOrder, []any{0, 10}, "ix_outbox_pending"},
		{"claim per key", dueRows + headOfKey + dueOrder, []any{0, 10}, "ix_outbox_ordering"},
		{"stats", statsQuery, []any{0}, "ix_outbox_pending"},
		{"list dead", listDead, []any{"", "", nil, 0, 10}, "ix_outbox_dead"},
		{"purge published", purgePublished, []any{0, 10}, "ix_outbox_published_at"},
		{"purge dead", purgeDead, []any{0, 10}, "ix_outbox_dead_at"},
		{"expire", expireRows, []any{0, 10, ""}, "ix_outbox_expires_at"},
		{"complete", completeRows, []any{0, "[]"}, "sqlite_autoindex_outbox_1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := explain(t, db, tt.query, tt.args...)
			if !strings.Contains(plan, tt.index) {
				t.Errorf("plan does not use %s:\n%s", tt.index, plan)
			}
			for _, line := range strings.Split(plan, "\n") {
				if strings.HasPrefix(strings.TrimSpace(line), "SCAN outbox") && !strings.Contains(line, "INDEX") {
					t.Errorf("plan scans the table:\n%s", plan)
				}
			}
		})
	}
}

func explain(t *testing.T, db *sql.DB, query string, args ...any) string {
	t.Helper()
	rows, err := db.Query("EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		b.WriteString(detail + "\n")
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
