package mysqlstoretest_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"log/slog"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/reliar/reliar/store/mysqlstore"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	slog.SetDefault(slog.New(slog.DiscardHandler))
	goleak.VerifyTestMain(m)
}

// serverConfig is the local MariaDB as root, without a database.
func serverConfig() *mysql.Config {
	cfg := mysql.NewConfig()
	cfg.User = "root"
	cfg.Net = "tcp"
	cfg.Addr = "127.0.0.1:3306"
	cfg.ParseTime = true
	return cfg
}

// newDatabase creates a database of its own and returns a handle on it and
// a function that drops it.
func newDatabase(ctx context.Context) (*sql.DB, func(), error) {
	cfg := serverConfig()
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
