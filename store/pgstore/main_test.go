package pgstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/goleak"
)

// testDSN is the PostgreSQL every test of this package runs against.
const testDSN = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// sharedPool serves the tests that do not break connections on purpose. Its
// search_path is empty, so any unqualified table reference fails loudly.
var sharedPool *pgxpool.Pool

func TestMain(m *testing.M) { os.Exit(runTests(m)) }

func runTests(m *testing.M) int {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pool, err := newTestPool(ctx, 12, "")
	if err == nil {
		err = pool.Ping(ctx)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "pgstore tests need PostgreSQL at %s: %v\n", testDSN, err)
		return 1
	}
	sharedPool = pool
	code := m.Run()
	pool.Close()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			return 1
		}
	}
	return code
}

// newTestPool connects with an empty search_path and, when given, an
// application name that lets a test find its own backends.
func newTestPool(ctx context.Context, maxConns int32, appName string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(testDSN)
	if err != nil {
		return nil, err
	}
	cfg.MaxConns = maxConns
	cfg.ConnConfig.RuntimeParams["search_path"] = ""
	if appName != "" {
		cfg.ConnConfig.RuntimeParams["application_name"] = appName
	}
	return pgxpool.NewWithConfig(ctx, cfg)
}

// dedicatedPool returns a pool of the test's own, closed in t.Cleanup, and
// its application name.
func dedicatedPool(t testing.TB, maxConns int32) (*pgxpool.Pool, string) {
	t.Helper()
	app := "reliar_test_" + randomSuffix()
	pool, err := newTestPool(t.Context(), maxConns, app)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool, app
}

func randomSuffix() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// newSchemaName returns a random schema name dropped, with everything in
// it, when the test ends.
func newSchemaName(t testing.TB) string {
	t.Helper()
	schema := "reliar_t_" + randomSuffix()
	t.Cleanup(func() { dropSchema(t, schema) })
	return schema
}

func dropSchema(t testing.TB, schema string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := sharedPool.Exec(ctx, `DROP SCHEMA IF EXISTS "`+schema+`" CASCADE`); err != nil {
		t.Errorf("drop schema %s: %v", schema, err)
	}
}

// quietLogger discards everything, so that background goroutines never write
// to a finished test.
func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// newStore migrates a fresh schema and returns a store over the shared pool.
func newStore(t testing.TB, opts ...Option) *Store {
	t.Helper()
	return newStoreOn(t, sharedPool, opts...)
}

func newStoreOn(t testing.TB, pool *pgxpool.Pool, opts ...Option) *Store {
	t.Helper()
	schema := newSchemaName(t)
	if err := Migrate(t.Context(), pool, WithSchema(schema)); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	opts = append([]Option{WithSchema(schema), WithLogger(quietLogger())}, opts...)
	s, err := New(t.Context(), pool, opts...)
	if err != nil {
		t.Fatalf("new store: %v", err)
	}
	return s
}
