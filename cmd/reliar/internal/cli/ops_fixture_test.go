package cli

import (
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/cmd/reliar/internal/storeurl"
	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// opsTarget is a migrated outbox database that an operator command test
// runs against: a fresh PostgreSQL schema or a fresh SQLite file.
type opsTarget struct {
	name string
	// args are --database-url and, on PostgreSQL, --schema.
	args   []string
	url    string
	schema string
}

// opsTargets returns a fresh, migrated target of each store the operator
// commands run on.
func opsTargets(t *testing.T) []opsTarget {
	return []opsTarget{newPostgresTarget(t, true), newSQLiteTarget(t)}
}

// newPostgresTarget creates a schema, dropped after the test, migrated
// when migrate is true.
func newPostgresTarget(t *testing.T, migrate bool) opsTarget {
	t.Helper()
	schema := randomName("reliar_ops_")
	t.Cleanup(func() { dropSchema(t, schema) })
	tg := opsTarget{name: "postgres", url: postgresURL, schema: schema,
		args: []string{"--database-url", postgresURL, "--schema", schema}}
	if migrate {
		tg.migrate(t)
	}
	return tg
}

// newSQLiteTarget creates a migrated SQLite file in a temporary folder.
func newSQLiteTarget(t *testing.T) opsTarget {
	t.Helper()
	url := "sqlite://" + filepath.Join(t.TempDir(), "outbox.db")
	tg := opsTarget{name: "sqlite", url: url, args: []string{"--database-url", url}}
	tg.migrate(t)
	return tg
}

func (tg opsTarget) migrate(t *testing.T) {
	t.Helper()
	if r := run(t, nil, append([]string{"migrate"}, tg.args...)...); r.code != 0 {
		t.Fatalf("migrate %s: code %d, stderr %q", tg.name, r.code, r.stderr)
	}
}

// cmd returns the arguments of a command on the target.
func (tg opsTarget) cmd(args ...string) []string {
	return append(args, tg.args...)
}

// open opens the target's store for the test, closed afterwards.
func (tg opsTarget) open(t *testing.T) (storeurl.Backend, outbox.Store) {
	t.Helper()
	ctx := context.Background()
	loc, err := storeurl.Parse(tg.url)
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.DiscardHandler)
	b, err := loc.Open(ctx, storeurl.Options{Schema: tg.schema, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close(context.Background()) })
	s, err := b.Store(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return b, s
}

// opsMessage is the body of the messages the tests enqueue.
type opsMessage struct {
	Type string `json:"-"`
	N    int    `json:"n"`
}

func (m opsMessage) MessageType() string { return m.Type }

// Fates of a seeded row.
const (
	fateDue       = "due"
	fateScheduled = "scheduled"
	fateLeased    = "leased"
	fateDead      = "dead"
	fatePublished = "published"
	fateExpired   = "expired"
)

// seedRow describes one row to seed.
type seedRow struct {
	typ, tenant, fate string
}

// seed writes rows into the target in one transaction, then brings each
// to its fate: claimed and failed for good (dead), completed (published),
// claimed with a long lease (leased), enqueued for later (scheduled), or
// past expires_at (expired). It returns the ids in order.
func seed(t *testing.T, tg opsTarget, rows ...seedRow) []reliar.MessageID {
	t.Helper()
	ctx := context.Background()
	b, s := tg.open(t)
	tx, err := b.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	fates := map[reliar.MessageID]string{}
	msgs := make([]reliar.Outgoing, len(rows))
	for i, r := range rows {
		m := reliar.NewMsg(opsMessage{Type: r.typ, N: i})
		m.Metadata.TenantID = r.tenant
		switch r.fate {
		case fateScheduled:
			m.AvailableAt = time.Now().Add(time.Hour)
		case fateExpired:
			past := time.Now().Add(-time.Hour)
			m.Metadata.Delivery.ExpiresAt = &past
		}
		msgs[i] = m
		fates[m.ID] = r.fate
	}
	ids, err := tx.Enqueue(ctx, msgs...)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	batch, err := s.Acquire(ctx, outboxdriver.AcquireRequest{Worker: "seed", BatchSize: len(rows) + 1, Lease: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	var done, release []outboxdriver.Lease
	var fail []outboxdriver.FailedOutcome
	for _, rec := range batch.Records {
		switch fates[rec.Envelope.ID] {
		case fateDead:
			fail = append(fail, outboxdriver.FailedOutcome{Lease: rec.Lease(), Error: "broker said no", DeadReason: outbox.DeadPermanent})
		case fatePublished:
			done = append(done, rec.Lease())
		case fateLeased:
		default:
			release = append(release, rec.Lease())
		}
	}
	if _, err := s.Fail(ctx, fail); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Complete(ctx, done); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Release(ctx, release); err != nil {
		t.Fatal(err)
	}
	return ids
}

// repeat returns n copies of r.
func repeat(n int, r seedRow) []seedRow {
	out := make([]seedRow, n)
	for i := range out {
		out[i] = r
	}
	return out
}

// statsOf runs reliar stats --json on the target.
func statsOf(t *testing.T, tg opsTarget) map[string]float64 {
	t.Helper()
	r := run(t, nil, tg.cmd("stats", "--json")...)
	if r.code != 0 {
		t.Fatalf("stats: code %d, stderr %q", r.code, r.stderr)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("stats --json %q: %v", r.stdout, err)
	}
	out := map[string]float64{}
	for k, v := range doc {
		if f, ok := v.(float64); ok {
			out[k] = f
		}
	}
	return out
}
