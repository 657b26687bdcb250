package pgstore

import (
	"context"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// schemaAt creates a schema migrated to version by the files of Migrations,
// applied whole as an external tool would, and returns its names.
func schemaAt(t *testing.T, version int) names {
	t.Helper()
	ctx := t.Context()
	n := mustNames(t, newSchemaName(t))
	fsys, err := Migrations(WithSchema(n.schema))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sharedPool.Exec(ctx, n.render(`CREATE SCHEMA {{schema}}`)); err != nil {
		t.Fatal(err)
	}
	ups, _ := fs.Glob(fsys, "*.up.sql")
	for _, file := range ups[:version] {
		body, _ := fs.ReadFile(fsys, file)
		if _, err := sharedPool.Exec(ctx, string(body)); err != nil {
			t.Fatalf("apply %s: %v", file, err)
		}
	}
	return n
}

// hostileUpgradeRows are rows a plain-SQL producer could write before
// schema version 4, each with what the upgrade must make of it: the state
// (pending, or dead as undecodable) and a text its last_error names.
var hostileUpgradeRows = []struct {
	columns, values string
	dead            bool
	note            string
}{
	{"available_at", "'-infinity'", false, "available_at -infinity"},
	{"available_at", "'infinity'", true, "available_at infinity"},
	{"created_at", "'infinity'", true, "created_at infinity"},
	{"created_at", "'-infinity'", true, "created_at -infinity"},
	{"expires_at", "'infinity'", false, "expires_at infinity"},
	{"message_version", "0", true, "message_version 0"},
	{"message_version", "70000", true, "message_version 70000"},
	{"attempts, claim_count", "-3, -1", false, "attempts -3, claim_count -1"},
}

// A table that already holds the rows schema version 4 refuses is upgraded:
// each is repaired or moved to dead with its reason, nothing is lost, the
// checks end up validated, and every row can then be claimed or listed.
func TestMigrateUpgradesATableHoldingUnreadableRows(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	n := schemaAt(t, 3)
	good := reliar.NewMessageID()
	if _, err := sharedPool.Exec(ctx, n.render(`INSERT INTO {{table}} (id, message_type, payload) VALUES ($1, 'good', '{}')`), good.String()); err != nil {
		t.Fatal(err)
	}
	ids := make([]reliar.MessageID, len(hostileUpgradeRows))
	for i, r := range hostileUpgradeRows {
		ids[i] = reliar.NewMessageID()
		if _, err := sharedPool.Exec(ctx, n.render(fmt.Sprintf(`INSERT INTO {{table}} (id, message_type, payload, %s) VALUES ($1, 'hostile', '{}', %s)`,
			r.columns, r.values)), ids[i].String()); err != nil {
			t.Fatalf("insert %s = %s at version 3: %v", r.columns, r.values, err)
		}
	}
	if err := Migrate(ctx, sharedPool, WithSchema(n.schema)); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	var unvalidated []string
	rows, err := sharedPool.Query(ctx, `SELECT conname FROM pg_constraint WHERE conrelid = $1::regclass AND NOT convalidated`, n.table)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var name string
		_ = rows.Scan(&name)
		unvalidated = append(unvalidated, name)
	}
	if rows.Err() != nil || len(unvalidated) > 0 {
		t.Fatalf("constraints left NOT VALID: %v (%v)", unvalidated, rows.Err())
	}
	s, err := New(ctx, sharedPool, WithSchema(n.schema), WithLogger(quietLogger()))
	if err != nil {
		t.Fatal(err)
	}
	wantPending := []reliar.MessageID{good}
	for i, r := range hostileUpgradeRows {
		var deadReason, lastError *string
		if err := sharedPool.QueryRow(ctx, n.render(`SELECT dead_reason, last_error FROM {{table}} WHERE id = $1`), ids[i].String()).Scan(&deadReason, &lastError); err != nil {
			t.Fatalf("%s: %v", r.note, err)
		}
		if r.dead != (deref(deadReason) == string(outboxdriver.DeadUndecodable)) {
			t.Errorf("%s: dead_reason %v, want dead %v", r.note, deref(deadReason), r.dead)
		}
		if lastError == nil || !strings.Contains(*lastError, r.note) {
			t.Errorf("%s: last_error %v does not say what the row held", r.note, deref(lastError))
		}
		if !r.dead {
			wantPending = append(wantPending, ids[i])
		}
	}
	b, err := s.Acquire(ctx, outboxdriver.AcquireRequest{Worker: "w", BatchSize: 100, Lease: time.Minute})
	if err != nil {
		t.Fatalf("Acquire after the upgrade: %v", err)
	}
	var got []reliar.MessageID
	for _, r := range b.Records {
		got = append(got, r.Envelope.ID)
	}
	slices.SortFunc(got, func(a, b reliar.MessageID) int { return strings.Compare(a.String(), b.String()) })
	slices.SortFunc(wantPending, func(a, b reliar.MessageID) int { return strings.Compare(a.String(), b.String()) })
	if !slices.Equal(got, wantPending) || len(b.Poisoned) != 0 {
		t.Errorf("claimed %v (poisoned %+v), want the rows left pending %v", got, b.Poisoned, wantPending)
	}
	page, err := s.ListDead(ctx, outboxdriver.DeadQuery{})
	if err != nil {
		t.Fatalf("ListDead after the upgrade: %v", err)
	}
	if len(page.Records)+len(page.Poisoned) != 5 {
		t.Errorf("ListDead: %d records and %d poisoned, want the 5 dead rows", len(page.Records), len(page.Poisoned))
	}
	if _, err := s.Stats(ctx); err != nil {
		t.Errorf("Stats after the upgrade: %v", err)
	}
}

func deref(p *string) string {
	if p == nil {
		return "NULL"
	}
	return *p
}

// The upgrade to schema version 4 on a table of a million rows while
// producers commit single-row transactions: no step may hold a lock that
// makes them wait for the table's scan. The commit latencies seen during
// the migration are logged (BENCHMARKS.md, "PostgreSQL: migrating a live
// table", has a run's); the test asserts that every producer kept committing while the
// migration ran.
func TestMigrateMillionRowsWhileProducersCommit(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	rows := 1_000_000
	if testing.Short() {
		rows = 100_000
	}
	n := schemaAt(t, 3)
	fill := time.Now()
	if _, err := sharedPool.Exec(ctx, n.render(fmt.Sprintf(`INSERT INTO {{table}} (id, message_type, payload, published_at)
SELECT gen_random_uuid(), 'bulk', '\x7b7d', CASE WHEN g %% 4 = 0 THEN NULL ELSE now() END
FROM generate_series(1, %d) g`, rows))); err != nil {
		t.Fatal(err)
	}
	if _, err := sharedPool.Exec(ctx, n.render(`INSERT INTO {{table}} (id, message_type, payload, available_at) VALUES
    (gen_random_uuid(), 'bad', '{}', '-infinity'), (gen_random_uuid(), 'bad', '{}', 'infinity');
ANALYZE {{table}}`)); err != nil {
		t.Fatal(err)
	}
	t.Logf("filled %d rows in %v", rows, time.Since(fill).Round(time.Millisecond))

	const producers = 4
	var (
		mu        sync.Mutex
		latencies []time.Duration
		during    [producers]int
		migrating bool
		wg        sync.WaitGroup
	)
	pctx, stop := context.WithCancel(ctx)
	defer stop()
	insert := n.render(`INSERT INTO {{table}} (id, message_type, payload) VALUES ($1, 'live', '{}')`)
	for p := range producers {
		wg.Go(func() {
			for pctx.Err() == nil {
				start := time.Now()
				_, err := sharedPool.Exec(pctx, insert, reliar.NewMessageID().String())
				if err != nil {
					if pctx.Err() == nil {
						t.Errorf("producer %d: %v", p, err)
					}
					return
				}
				mu.Lock()
				if migrating {
					latencies = append(latencies, time.Since(start))
					during[p]++
				}
				mu.Unlock()
			}
		})
	}
	time.Sleep(200 * time.Millisecond) // the producers are committing
	mu.Lock()
	migrating = true
	mu.Unlock()
	began := time.Now()
	err := Migrate(ctx, sharedPool, WithSchema(n.schema))
	took := time.Since(began)
	mu.Lock()
	migrating = false
	mu.Unlock()
	stop()
	wg.Wait()
	if err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	slices.Sort(latencies)
	pct := func(p float64) time.Duration {
		if len(latencies) == 0 {
			return 0
		}
		return latencies[min(len(latencies)-1, int(p*float64(len(latencies))))]
	}
	t.Logf("migration of %d rows took %v; %d producer commits meanwhile, latency p50 %v p99 %v max %v",
		rows, took.Round(time.Millisecond), len(latencies), pct(0.5), pct(0.99), pct(1))
	for p, c := range during {
		if c == 0 {
			t.Errorf("producer %d committed nothing during the %v migration: a step blocked the table", p, took)
		}
	}
}
