package relay

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/reliar/reliar/cmd/reliar/internal/broker"
	"github.com/reliar/reliar/cmd/reliar/internal/storeurl"
	"github.com/reliar/reliar/store/pgstore"
)

// pgbouncerURL is PgBouncer in transaction mode in front of the test
// database (scripts/services.sh starts it); the tests fail without it.
const pgbouncerURL = "postgres://postgres@127.0.0.1:6432/test?sslmode=disable"

func withStore(t *testing.T, cfg Config, raw string) Config {
	t.Helper()
	loc, err := storeurl.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Store = loc
	return cfg
}

// TestRunThroughPgBouncer: the plain URL through PgBouncer in transaction
// mode with --no-listen publishes every row, the maintainer runs, and the
// relay leaves no maintenance lease behind.
func TestRunThroughPgBouncer(t *testing.T) {
	s := newSchema(t)
	s.migrate(t)
	prefix := randomName("relay_unit_")
	count := newStream(t, prefix)
	cfg := withStore(t, testConfig(t, s, natsURL, broker.Options{SubjectPrefix: prefix}), pgbouncerURL)
	cfg.NoWakeups = true
	r := start(t, cfg)
	eventually(t, "/readyz to answer 200", r.readyz(t, http.StatusOK, "ready"))
	s.exec(t, `INSERT INTO `+s.table()+` (id, message_type, payload) SELECT gen_random_uuid(), 'order_placed', '\x7b7d' FROM generate_series(1, 600)`)
	eventually(t, "600 messages", func() bool { return count() == 600 })
	eventually(t, "every row recorded published", func() bool {
		var pending int
		if err := s.pool.QueryRow(t.Context(), "SELECT count(*) FROM "+s.table()+" WHERE published_at IS NULL").Scan(&pending); err != nil {
			t.Fatal(err)
		}
		return pending == 0
	})
	if c, body := r.get(t, "/readyz"); c != http.StatusOK {
		t.Fatalf("/readyz = %d %s; want 200", c, body)
	}
	if err := r.stop(t); err != nil {
		t.Fatalf("Run = %v, want nil", err)
	}
	var leases, dead int
	if err := s.pool.QueryRow(t.Context(), "SELECT count(*) FROM "+pgx.Identifier{s.name, "reliar_leases"}.Sanitize()).Scan(&leases); err != nil {
		t.Fatal(err)
	}
	if err := s.pool.QueryRow(t.Context(), "SELECT count(*) FROM "+s.table()+" WHERE dead_at IS NOT NULL").Scan(&dead); err != nil {
		t.Fatal(err)
	}
	if leases != 0 || dead != 0 {
		t.Fatalf("after the relay stopped: %d maintenance leases, %d dead rows; want 0 and 0", leases, dead)
	}
}

// readOnlyDatabase creates a database of the test's own, migrated, whose
// transactions are then read-only by default; dropped when the test ends.
func readOnlyDatabase(t *testing.T) string {
	t.Helper()
	ctx := t.Context()
	admin, err := pgxpool.New(ctx, postgresURL)
	if err != nil {
		t.Fatal(err)
	}
	name := randomName("reliar_ro_")
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
		admin.Close()
	})
	url := "postgres://postgres@127.0.0.1:5432/" + name + "?sslmode=disable"
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if err := pgstore.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO public.outbox (id, message_type, payload) VALUES (gen_random_uuid(), 'order_placed', '\x7b7d')`); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, "ALTER DATABASE "+name+" SET default_transaction_read_only = on"); err != nil {
		t.Fatal(err)
	}
	return url
}

// TestRunReadOnlyServer: a server whose transactions are read-only leaves
// the relay running and alive (/healthz 200) but not ready, /readyz naming
// the cause.
func TestRunReadOnlyServer(t *testing.T) {
	url := readOnlyDatabase(t)
	s := &schema{name: pgstore.DefaultSchema}
	cfg := withStore(t, testConfig(t, s, natsURL, broker.Options{SubjectPrefix: randomName("relay_unit_")}), url)
	r := start(t, cfg)
	eventually(t, "/readyz to report the read-only server", r.readyz(t, http.StatusServiceUnavailable, "read-only"))
	if c, _ := r.get(t, "/healthz"); c != http.StatusOK {
		t.Fatalf("/healthz = %d; want 200", c)
	}
	if err := r.stop(t); err != nil {
		t.Fatalf("Run = %v, want nil", err)
	}
}
