package doctor

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reliar/reliar/store/pgstore"
)

// On a freshly migrated, empty table the planner's choice of index says
// nothing about the table it will become: the claim plan check is not a
// warning there.
func TestClaimPlanOnAFreshTable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, schema := testSchema(t)
	if err := pgstore.Migrate(ctx, pool, pgstore.WithSchema(schema)); err != nil {
		t.Fatal(err)
	}
	f, err := Gather(ctx, pool, schema, time.Minute, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	c, _ := NewReport("x", Evaluate(f, Thresholds{})).Find(CheckClaimPlan)
	if c.Verdict != OK || !strings.Contains(c.Found, "not judged") {
		t.Fatalf("claim plan on a fresh table: %s %q (plans: claim %+v, key %+v, %+v); want ok, not judged",
			c.Verdict, c.Found, f.ClaimPlan, f.KeyPlan, f.Table)
	}
}

// On a table with rows and statistics the plan is judged: healthy, it is
// ok; with the per-key index replaced by one that cannot serve the head
// lookup (present and valid, so the indexes check is content), it warns.
func TestClaimPlanOnAnAnalyzedTable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, schema := testSchema(t)
	quiet := slog.New(slog.DiscardHandler)
	if err := pgstore.Migrate(ctx, pool, pgstore.WithSchema(schema)); err != nil {
		t.Fatal(err)
	}
	table := pgx.Identifier{schema, "outbox"}.Sanitize()
	if _, err := pool.Exec(ctx, `INSERT INTO `+table+` (id, message_type, payload, ordering_key, tenant_id)
SELECT gen_random_uuid(), 't', '{}', 'key-' || (i % 500), 'tenant-' || (i % 7) FROM generate_series(1, 5000) i`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `ANALYZE `+table); err != nil {
		t.Fatal(err)
	}
	check := func() Check {
		t.Helper()
		f, err := Gather(ctx, pool, schema, time.Minute, quiet)
		if err != nil {
			t.Fatal(err)
		}
		c, _ := NewReport("x", Evaluate(f, Thresholds{})).Find(CheckClaimPlan)
		return c
	}
	if c := check(); c.Verdict != OK || strings.Contains(c.Found, "not judged") {
		t.Fatalf("claim plan on a healthy analyzed table: %s %q; want ok, judged", c.Verdict, c.Found)
	}
	key := pgx.Identifier{schema, PendingKeyIdx}.Sanitize()
	if _, err := pool.Exec(ctx, `DROP INDEX `+key+`; CREATE INDEX `+PendingKeyIdx+` ON `+table+` (message_type) WHERE false; ANALYZE `+table); err != nil {
		t.Fatal(err)
	}
	if c := check(); c.Verdict != Warn || !strings.Contains(c.Found, "per-key head lookup uses") || strings.Contains(c.Found, "not judged") {
		t.Fatalf("claim plan with an unusable key index: %s %q; want warn", c.Verdict, c.Found)
	}
}
