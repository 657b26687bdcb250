//go:build chaos

package chaos_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/chaos/internal/rig"
	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/outbox/outboxdriver"
	"github.com/reliar/reliar/store/pgstore"
)

// TestSchemaNameInjectionRefused: a schema name that is not a plain
// identifier is refused by the store, by Migrate and by the relay, and
// nothing named after it appears in the database.
func TestSchemaNameInjectionRefused(t *testing.T) {
	ctx := ctxFor(t, time.Minute)
	pool, err := pgxpool.New(ctx, rig.PostgresURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	names := []string{
		`x"; DROP SCHEMA public CASCADE; --`,
		`x'; SELECT pg_sleep(10); --`,
		"public.outbox",
		"two words",
		"semi;colon",
		"",
		strings.Repeat("a", 64),
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			if err := pgstore.Migrate(ctx, pool, pgstore.WithSchema(name)); !errors.Is(err, pgstore.ErrInvalidSchema) {
				t.Errorf("Migrate(%q) = %v, want ErrInvalidSchema", name, err)
			}
			if _, err := pgstore.New(ctx, pool, pgstore.WithSchema(name)); !errors.Is(err, pgstore.ErrInvalidSchema) {
				t.Errorf("New(WithSchema(%q)) = %v, want ErrInvalidSchema", name, err)
			}
			var n int
			if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_namespace WHERE nspname = $1`, name).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n != 0 {
				t.Errorf("a schema named %q exists", name)
			}
		})
	}
	var public int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_namespace WHERE nspname = 'public'`).Scan(&public); err != nil || public != 1 {
		t.Fatalf("schema public: %d, %v", public, err)
	}
}

// big is a message whose payload is as large as asked.
type big struct {
	Data string `json:"data"`
}

func (big) MessageType() string { return "chaos_big" }

// TestOversizedPayloadRefusedNothingElseLost: a transaction carrying a
// payload over the store's limit is refused whole, before anything is
// written; the messages committed around it are all delivered and nothing
// of the refused transaction is ever published.
func TestOversizedPayloadRefusedNothingElseLost(t *testing.T) {
	ctx := ctxFor(t, 2*time.Minute)
	r := rig.New(t, bin, rig.Options{})
	if err := r.Enqueue(ctx, 100, rig.EnqueueOptions{}); err != nil {
		t.Fatal(err)
	}
	small := reliar.NewMsg(rig.Event{N: -1})
	huge := reliar.NewMsg(big{Data: strings.Repeat("x", outboxdriver.DefaultMaxPayloadBytes+1)})
	err := r.EnqueueTx(ctx, small, huge)
	var tooLarge *outbox.PayloadTooLargeError
	if !errors.As(err, &tooLarge) || !errors.Is(err, outbox.ErrPayloadTooLarge) {
		t.Fatalf("enqueue of an oversized payload = %v, want a *PayloadTooLargeError", err)
	}
	if err := r.Enqueue(ctx, 100, rig.EnqueueOptions{}); err != nil {
		t.Fatal(err)
	}
	r.StartRelay("a", rig.RelayArgs{})
	rep := r.Finish(rig.FinishOptions{})
	if rep.Committed != 200 || rep.Delivered != 200 {
		t.Errorf("committed %d, delivered %d; want 200 and 200", rep.Committed, rep.Delivered)
	}
	for _, id := range r.Sink.Attempts() {
		if id == small.ID || id == huge.ID {
			t.Errorf("message %s of the refused transaction was published", id)
		}
	}
}
