package mysqlstoretest_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/reliar/reliar/store/mysqlstore"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	slog.SetDefault(slog.New(slog.DiscardHandler))
	goleak.VerifyTestMain(m)
}

// serverConfig is the test server without a database: the DSN in
// RELIAR_TEST_MYSQL_DSN, as mysqlstore's own tests read it, or the local
// MariaDB as root.
func serverConfig() (*mysql.Config, error) {
	if dsn := os.Getenv("RELIAR_TEST_MYSQL_DSN"); dsn != "" {
		cfg, err := mysql.ParseDSN(dsn)
		if err != nil {
			return nil, fmt.Errorf("RELIAR_TEST_MYSQL_DSN: %w", err)
		}
		cfg.DBName = ""
		cfg.ParseTime = true
		return cfg, nil
	}
	cfg := mysql.NewConfig()
	cfg.User = "root"
	cfg.Net = "tcp"
	cfg.Addr = "127.0.0.1:3306"
	cfg.ParseTime = true
	return cfg, nil
}

// newDatabase creates a database of its own and returns a handle on it and
// a function that drops it.
func newDatabase(ctx context.Context) (*sql.DB, func(), error) {
	cfg, err := serverConfig()
	if err != nil {
		return nil, nil, err
	}
	admin, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		return nil, nil, err
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	cfg.DBName = "reliar_kit_" + hex.EncodeToString(b)
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+cfg.DBName); err != nil {
		admin.Close()
		return nil, nil, err
	}
	db, err := sql.Open("mysql", cfg.FormatDSN())
	drop := func() {
		if db != nil {
			db.Close()
		}
		_, _ = admin.ExecContext(context.WithoutCancel(ctx), "DROP DATABASE "+cfg.DBName)
		admin.Close()
	}
	if err != nil {
		drop()
		return nil, nil, err
	}
	if err := mysqlstore.Migrate(ctx, db); err != nil {
		drop()
		return nil, nil, err
	}
	return db, drop, nil
}

// newStore returns a handle on a fresh migrated database of the test's
// own, and a store over it.
func newStore(t *testing.T) (*sql.DB, *mysqlstore.Store) {
	t.Helper()
	db, drop, err := newDatabase(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(drop)
	store, err := mysqlstore.New(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	return db, store
}
