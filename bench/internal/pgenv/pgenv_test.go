package pgenv

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestSanitize(t *testing.T) {
	for in, want := range map[string]string{
		"reliar defaults":        "bench_reliar_defaults",
		"River Tuned":            "bench_river_tuned",
		"pg → jetstream by hand": "bench_pg___jetstream_by_hand",
		strings.Repeat("a", 80):  "bench_" + strings.Repeat("a", 34),
	} {
		if got := sanitize(in); got != want {
			t.Errorf("sanitize(%q) = %q, want %q", in, got, want)
		}
	}
}

func schemaExists(t *testing.T, ctx context.Context, schema string) bool {
	t.Helper()
	conn, err := pgx.Connect(ctx, DefaultDSN)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var ok bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)`, schema).Scan(&ok); err != nil {
		t.Fatal(err)
	}
	return ok
}

func TestFreshAndPool(t *testing.T) {
	ctx := t.Context()
	env, drop, err := Fresh(ctx, DefaultDSN, "pgenv test")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(env.Schema, "bench_pgenv_test_") || len(env.Schema) > 63 || !schemaExists(t, ctx, env.Schema) {
		t.Fatalf("schema %q not created as expected", env.Schema)
	}
	pool, err := env.Pool(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	var path, sync string
	if err := pool.QueryRow(ctx, `SELECT current_setting('search_path'), current_setting('synchronous_commit')`).Scan(&path, &sync); err != nil {
		t.Fatal(err)
	}
	if path != env.Schema || sync != "on" || pool.Config().MaxConns != 2 {
		t.Errorf("search_path %q, synchronous_commit %q, max conns %d", path, sync, pool.Config().MaxConns)
	}
	pool.Close()
	if err := drop(ctx); err != nil {
		t.Fatal(err)
	}
	if schemaExists(t, ctx, env.Schema) {
		t.Fatalf("schema %s still exists after drop", env.Schema)
	}
}

func TestBadDSN(t *testing.T) {
	ctx := t.Context()
	if _, _, err := Fresh(ctx, "postgres://postgres@127.0.0.1:1/test?connect_timeout=1", "x"); err == nil {
		t.Error("Fresh on a closed port succeeded")
	}
	if _, err := (Env{DSN: "::not a dsn::", Schema: "x"}).Pool(ctx, 0); err == nil {
		t.Error("Pool with a malformed DSN succeeded")
	}
}
