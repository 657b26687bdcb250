package sqlitestoretest_test

import (
	"database/sql"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/reliar/reliar/store/sqlitestore"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	slog.SetDefault(slog.New(slog.DiscardHandler))
	goleak.VerifyTestMain(m)
}

// newStore returns a handle on a fresh migrated database file of the
// test's own, and a store over it.
func newStore(t *testing.T) (*sql.DB, *sqlitestore.Store) {
	t.Helper()
	db, err := sqlitestore.Open(filepath.Join(t.TempDir(), "outbox.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := sqlitestore.Migrate(t.Context(), db); err != nil {
		t.Fatal(err)
	}
	store, err := sqlitestore.New(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	return db, store
}
