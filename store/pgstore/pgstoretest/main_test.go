package pgstoretest_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/reliar/reliar/store/pgstore"
	"go.uber.org/goleak"
)

const testDSN = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

func TestMain(m *testing.M) {
	slog.SetDefault(slog.New(slog.DiscardHandler))
	goleak.VerifyTestMain(m)
}

// newStore returns a pool and a store on a fresh migrated schema, both
// dropped when t ends.
func newStore(t *testing.T) (*pgxpool.Pool, *pgstore.Store) {
	t.Helper()
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, testDSN)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "reliar_pgstoretest_" + hex.EncodeToString(b)
	t.Cleanup(func() {
		_, _ = pool.Exec(context.Background(), `DROP SCHEMA IF EXISTS "`+schema+`" CASCADE`)
		pool.Close()
	})
	if err := pgstore.Migrate(ctx, pool, pgstore.WithSchema(schema)); err != nil {
		t.Fatal(err)
	}
	store, err := pgstore.New(ctx, pool, pgstore.WithSchema(schema))
	if err != nil {
		t.Fatal(err)
	}
	return pool, store
}

// recordTB is an outboxtest.TB that records failures instead of stopping.
type recordTB struct {
	errors  []string
	failNow int
}

func (r *recordTB) Helper() {}

func (r *recordTB) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func (r *recordTB) FailNow() { r.failNow++ }

// failed returns the one failure message, failing t when there is not
// exactly one followed by FailNow.
func (r *recordTB) failed(t *testing.T) string {
	t.Helper()
	if len(r.errors) != 1 || r.failNow != 1 {
		t.Fatalf("want 1 failure and 1 FailNow, got %q and %d FailNow", r.errors, r.failNow)
	}
	return r.errors[0]
}

func mustContain(t *testing.T, msg string, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(msg, p) {
			t.Errorf("failure message lacks %q:\n%s", p, msg)
		}
	}
}
