package pgstore

import (
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

func TestSplitSteps(t *testing.T) {
	t.Parallel()
	one, err := splitSteps("CREATE TABLE a (x int);\nCREATE TABLE b (x int);\n")
	if err != nil || len(one) != 1 || one[0].noTx {
		t.Fatalf("a file without markers = %+v, %v; want one transactional step", one, err)
	}
	steps, err := splitSteps(`-- header
-- reliar:step
ALTER TABLE t ADD CONSTRAINT c CHECK (x > 0) NOT VALID;
-- reliar:step no-transaction
-- a comment of the step
CREATE INDEX CONCURRENTLY IF NOT EXISTS i ON t (x);
-- reliar:step
ALTER TABLE t VALIDATE CONSTRAINT c;
INSERT INTO v VALUES (1);
`)
	if err != nil || len(steps) != 3 || steps[0].noTx || !steps[1].noTx || steps[2].noTx {
		t.Fatalf("steps = %+v, %v; want transaction, no-transaction, transaction", steps, err)
	}
	for _, bad := range []string{
		"SELECT 1;\n-- reliar:step\nSELECT 2;\n",
		"-- reliar:step sometimes\nSELECT 1;\n",
		"-- reliar:step no-transaction\nCREATE INDEX CONCURRENTLY i ON t (x);\nSELECT 1;\n",
	} {
		if _, err := splitSteps(bad); err == nil {
			t.Errorf("splitSteps(%q) accepted it", bad)
		}
	}
	if m := concurrentIndex.FindStringSubmatch(`CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "outbox_fair_idx" ON x (y)`); m == nil || m[1] != "outbox_fair_idx" {
		t.Errorf("index name = %v", m)
	}
}

// A CREATE INDEX CONCURRENTLY step that was interrupted leaves an INVALID
// index; the next Migrate drops it and builds it again, and a step that
// cannot run inside a transaction is never put in one.
func TestMigrateRebuildsAnIndexLeftInvalid(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := newStore(t)
	base, err := loadMigrations(s.n)
	if err != nil {
		t.Fatal(err)
	}
	steps, err := splitSteps(s.n.render(`-- reliar:step
CREATE TABLE IF NOT EXISTS {{schema}}.probe (x int);
-- reliar:step no-transaction
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS probe_x_idx ON {{schema}}.probe (x);
-- reliar:step
INSERT INTO {{schema}}.reliar_migrations (version, name) VALUES (1000, 'probe');
`))
	if err != nil {
		t.Fatal(err)
	}
	withIndex := append(base, migration{version: 1000, name: "probe", steps: steps})
	if _, err := sharedPool.Exec(ctx, s.n.render(`CREATE TABLE {{schema}}.probe (x int); INSERT INTO {{schema}}.probe VALUES (1), (1)`)); err != nil {
		t.Fatal(err)
	}
	err = migrate(ctx, sharedPool, s.n, withIndex)
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "23505" {
		t.Fatalf("Migrate over duplicate keys = %v, want the unique violation", err)
	}
	if valid := indexValid(t, s, "probe_x_idx"); valid == nil || *valid {
		t.Fatalf("after the failed build the index is %v, want present and invalid", valid)
	}
	if _, err := sharedPool.Exec(ctx, s.n.render(`DELETE FROM {{schema}}.probe`)); err != nil {
		t.Fatal(err)
	}
	if err := migrate(ctx, sharedPool, s.n, withIndex); err != nil {
		t.Fatalf("Migrate again: %v", err)
	}
	if valid := indexValid(t, s, "probe_x_idx"); valid == nil || !*valid {
		t.Fatalf("after Migrate again the index is %v, want valid", valid)
	}
	if v, err := schemaVersion(ctx, sharedPool, s.n); err != nil || v != 1000 {
		t.Fatalf("schema version %d, %v; want 1000", v, err)
	}
	if !strings.Contains(strings.ToLower(steps[1].sql), "concurrently") || !steps[1].noTx {
		t.Fatal("the probe's index step is not a no-transaction step")
	}
}

// indexValid reports whether the index is valid; nil when it is missing.
func indexValid(t *testing.T, s *Store, name string) *bool {
	t.Helper()
	var valid []bool
	rows, err := sharedPool.Query(t.Context(), `SELECT i.indisvalid FROM pg_index i
JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = $1 AND c.relname = $2`, s.n.schema, name)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var v bool
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		valid = append(valid, v)
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}
	if len(valid) == 0 {
		return nil
	}
	return &valid[0]
}
