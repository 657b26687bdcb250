package mysqlstore_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/inbox"
	"github.com/reliar/reliar/outbox/outboxdriver/outboxsql"
	"github.com/reliar/reliar/outbox/outboxdriver/outboxsql/outboxsqltest"
	"github.com/reliar/reliar/outbox/storetest"
	"github.com/reliar/reliar/store/mysqlstore"
)

// dsnEnv overrides the server the tests use; the default is the local
// MariaDB as root without a password.
const dsnEnv = "RELIAR_TEST_MYSQL_DSN"

// baseConfig is the driver configuration of the test server, without a
// database.
func baseConfig(t testing.TB) *mysql.Config {
	t.Helper()
	if dsn := os.Getenv(dsnEnv); dsn != "" {
		cfg, err := mysql.ParseDSN(dsn)
		if err != nil {
			t.Fatalf("%s: %v", dsnEnv, err)
		}
		cfg.DBName = ""
		cfg.ParseTime = true
		return cfg
	}
	cfg := mysql.NewConfig()
	cfg.User = "root"
	cfg.Net = "tcp"
	cfg.Addr = "127.0.0.1:3306"
	cfg.ParseTime = true
	return cfg
}

// newDatabase creates a database of the test's own, dropped when the test
// ends, and returns the configuration that opens it.
func newDatabase(t testing.TB) *mysql.Config {
	t.Helper()
	cfg := baseConfig(t)
	admin, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 6)
	rand.Read(b)
	name := "reliar_test_" + hex.EncodeToString(b)
	if _, err := admin.ExecContext(t.Context(), "CREATE DATABASE "+name); err != nil {
		admin.Close()
		t.Fatalf("create database (is MariaDB running on %s?): %v", cfg.Addr, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := admin.ExecContext(ctx, "DROP DATABASE "+name); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
		admin.Close()
	})
	cfg.DBName = name
	return cfg
}

// openDB opens cfg and closes the handle when the test ends.
func openDB(t testing.TB, cfg *mysql.Config) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// newDB returns a handle on a fresh migrated database.
func newDB(t testing.TB) (*sql.DB, *mysql.Config) {
	t.Helper()
	cfg := newDatabase(t)
	db := openDB(t, cfg)
	if err := mysqlstore.Migrate(t.Context(), db); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	return db, cfg
}

// newStore returns a store over a fresh migrated database.
func newStore(t testing.TB, opts ...mysqlstore.Option) *mysqlstore.Store {
	t.Helper()
	db, _ := newDB(t)
	s, err := mysqlstore.New(t.Context(), db, opts...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}

// enqueue writes msgs through s in one committed transaction.
func enqueue(ctx context.Context, s *mysqlstore.Store, msgs ...reliar.Outgoing) error {
	return outboxsqltest.Enqueue(ctx, s, msgs...)
}

// target describes the store to the shared tests of outboxsqltest.
var target = outboxsqltest.Target[time.Time]{
	New:   func(t testing.TB) outboxsqltest.Store { return newStore(t) },
	Inbox: func(s outboxsqltest.Store) inbox.Marker[*sql.Tx] { return s.(*mysqlstore.Store).Inbox() },
	Times: outboxsql.TimeCodec[time.Time]{
		Decode: time.Time.UTC,
		Encode: func(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) },
	},
	Now:     `UTC_TIMESTAMP(6)`,
	Advance: advance,
	ErrorOp: func(err error) (string, bool) {
		var me *mysqlstore.Error
		if !errors.As(err, &me) {
			return "", false
		}
		return me.Op, true
	},
	Open:          func(ctx context.Context, db *sql.DB) (outboxsqltest.Store, error) { return mysqlstore.New(ctx, db) },
	Migrate:       func(ctx context.Context, db *sql.DB) error { return mysqlstore.Migrate(ctx, db) },
	SchemaVersion: mysqlstore.SchemaVersion,
	NotMigrated: func(err error) (int, int, bool) {
		var nm *mysqlstore.NotMigratedError
		if !errors.As(err, &nm) {
			return 0, 0, false
		}
		return nm.Have, nm.Want, true
	},
	ErrNilTx:          mysqlstore.ErrNilTx,
	ErrInvalidRequest: mysqlstore.ErrInvalidRequest,
}

// TestConformance runs the store contract's suite, each subtest on a fresh
// database of its own: with the driver's default DSN settings, and with
// clientFoundRows=true, under which an UPDATE reports the rows it matched
// rather than those it changed (every count the contract checks must agree).
func TestConformance(t *testing.T) {
	for _, tt := range []struct {
		name            string
		clientFoundRows bool
	}{
		{"default", false},
		{"clientFoundRows", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T) storetest.Harness { return harness(t, tt.clientFoundRows) })
		})
	}
}

// harness is the storetest harness of a fresh store.
func harness(t *testing.T, clientFoundRows bool) storetest.Harness {
	return target.Harness(newStoreWith(t, clientFoundRows))
}

// newStoreWith returns a store over a fresh migrated database, through a
// handle whose DSN sets clientFoundRows as asked.
func newStoreWith(t *testing.T, clientFoundRows bool) *mysqlstore.Store {
	_, cfg := newDB(t)
	cfg = cfg.Clone()
	cfg.ClientFoundRows = clientFoundRows
	s, err := mysqlstore.New(t.Context(), openDB(t, cfg))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// advance moves every stored time d into the past.
func advance(ctx context.Context, db *sql.DB, d time.Duration) error {
	_, err := db.ExecContext(ctx, `UPDATE outbox SET
		available_at = available_at - INTERVAL ? MICROSECOND,
		created_at = created_at - INTERVAL ? MICROSECOND,
		updated_at = updated_at - INTERVAL ? MICROSECOND,
		last_claimed_at = last_claimed_at - INTERVAL ? MICROSECOND,
		locked_until = locked_until - INTERVAL ? MICROSECOND,
		expires_at = expires_at - INTERVAL ? MICROSECOND,
		published_at = published_at - INTERVAL ? MICROSECOND,
		dead_at = dead_at - INTERVAL ? MICROSECOND`,
		repeat(d.Microseconds(), 8)...)
	return err
}

func repeat(v any, n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = v
	}
	return out
}
