package doctor

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/goleak"

	"github.com/reliar/reliar/store/pgstore"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// postgresURL is the test database; the tests fail when it is missing.
const postgresURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// testSchema returns a pool and a fresh schema name, dropped afterwards.
func testSchema(t *testing.T) (*pgxpool.Pool, string) {
	t.Helper()
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, postgresURL)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	schema := "reliar_doctor_" + hex.EncodeToString(b)
	t.Cleanup(func() {
		if _, err := pool.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
		pool.Close()
	})
	return pool, schema
}

func TestGather(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, schema := testSchema(t)
	quiet := slog.New(slog.DiscardHandler)

	f, err := Gather(ctx, pool, schema, time.Minute, quiet)
	if err != nil || f.TableExists || f.Version != 0 || f.WantVersion != pgstore.SchemaVersion {
		t.Fatalf("before migrating: %+v, %v", f, err)
	}
	if err := pgstore.Migrate(ctx, pool, pgstore.WithSchema(schema)); err != nil {
		t.Fatal(err)
	}
	table := pgx.Identifier{schema, "outbox"}.Sanitize()
	if _, err := pool.Exec(ctx, `INSERT INTO `+table+` (id, message_type, payload, locked_by, locked_until)
VALUES (gen_random_uuid(), 't', '{}', NULL, NULL), (gen_random_uuid(), 't', '{}', 'crashed-worker', now() - interval '1 minute')`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO `+table+` (id, message_type, payload, dead_at, dead_reason) VALUES
(gen_random_uuid(), 't', '{}', now(), 'permanent'), (gen_random_uuid(), 't', '{}', now() - interval '2 hours', 'expired')`); err != nil {
		t.Fatal(err)
	}
	f, err = Gather(ctx, pool, schema, time.Minute, quiet)
	if err != nil {
		t.Fatal(err)
	}
	if !f.TableExists || f.Version != pgstore.SchemaVersion || f.Schema != schema {
		t.Fatalf("schema facts %+v", f)
	}
	names := map[string]bool{}
	for _, ix := range f.Indexes {
		names[ix.Name] = ix.Valid && ix.Bytes > 0
	}
	for _, want := range append(expectedIndexes, "outbox_pkey") {
		if !names[want] {
			t.Errorf("index %s missing, invalid or empty in %+v", want, f.Indexes)
		}
	}
	if !f.ClaimPlan.uses(PendingIndex) || f.ClaimPlan.SeqScan || !f.KeyPlan.uses(PendingKeyIdx) {
		t.Errorf("plans: claim %+v, key %+v", f.ClaimPlan, f.KeyPlan)
	}
	if f.Lapsed.Count != 1 || f.Lapsed.Oldest < 50*time.Second || len(f.Lapsed.Workers) != 1 || f.Lapsed.Workers[0] != "crashed-worker" {
		t.Errorf("lapsed %+v", f.Lapsed)
	}
	if f.Stats.Due != 2 || f.Stats.Dead != 2 || f.DeadLastHour != 1 || f.DeadBefore != 1 {
		t.Errorf("stats %+v, dead %d in the last hour and %d before", f.Stats, f.DeadLastHour, f.DeadBefore)
	}
	if f.Table.TableBytes <= 0 || f.Table.IndexBytes <= 0 || f.Table.PendingIndexBytes <= 0 {
		t.Errorf("sizes %+v", f.Table)
	}
	if f.OldestXact != nil && f.OldestXact.PID == 0 && f.OldestXact.State != "prepared" {
		t.Errorf("oldest transaction %+v", f.OldestXact)
	}

	if _, err := Gather(ctx, pool, "a;b", time.Minute, quiet); !errors.Is(err, pgstore.ErrInvalidSchema) {
		t.Fatalf("bad schema: %v", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := Gather(cancelled, pool, schema, time.Minute, quiet); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}

// A row copied with its xid from a cluster further along (a dump restored,
// logical replication) blocks its key for per-key claims until this
// cluster's counter catches up; doctor finds it, the keys it blocks, and
// its fix works.
func TestGatherFindsRowsAheadOfTheXIDCounter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, schema := testSchema(t)
	quiet := slog.New(slog.DiscardHandler)
	if err := pgstore.Migrate(ctx, pool, pgstore.WithSchema(schema)); err != nil {
		t.Fatal(err)
	}
	table := pgx.Identifier{schema, "outbox"}.Sanitize()
	if _, err := pool.Exec(ctx, `INSERT INTO `+table+` (id, message_type, payload, ordering_key, xid) VALUES
(gen_random_uuid(), 't', '{}', 'customer-7', (pg_current_xact_id()::text::int8 + 1000000)::text::xid8),
(gen_random_uuid(), 't', '{}', NULL, (pg_current_xact_id()::text::int8 + 5000)::text::xid8),
(gen_random_uuid(), 't', '{}', 'customer-8', DEFAULT)`); err != nil {
		t.Fatal(err)
	}
	f, err := Gather(ctx, pool, schema, time.Minute, quiet)
	if err != nil {
		t.Fatal(err)
	}
	x := f.XIDAhead
	if x.Rows != 2 || x.Keys != 1 || len(x.Sample) != 1 || x.Sample[0] != "customer-7" || x.MaxAhead < 999_000 || x.MaxAhead > 1_000_000 {
		t.Fatalf("rows ahead of the xid counter: %+v, want 2 rows, one key (customer-7), about 1000000 ahead", x)
	}
	rep := NewReport("x", Evaluate(f, Thresholds{}))
	c, _ := rep.Find(CheckXIDAhead)
	if c.Verdict != Red || !strings.Contains(c.Found, "customer-7") || !strings.Contains(c.Fix, "SET xid = pg_current_xact_id()") || !strings.Contains(c.Fix, "reliar repair xids") {
		t.Fatalf("check %+v", c)
	}
	fix := strings.TrimSuffix(c.Fix[strings.Index(c.Fix, "UPDATE"):strings.Index(c.Fix, "; when importing")], ";")
	if _, err := pool.Exec(ctx, fix); err != nil {
		t.Fatalf("the fix %q: %v", fix, err)
	}
	if f, err = Gather(ctx, pool, schema, time.Minute, quiet); err != nil || f.XIDAhead.Rows != 0 {
		t.Fatalf("after the fix: %+v, %v", f.XIDAhead, err)
	}
}
