package sqlitestore_test

import (
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/store/sqlitestore"
)

func TestMigrateIsIdempotent(t *testing.T) {
	db, _ := newDB(t) // migrated once
	for range 2 {
		if err := sqlitestore.Migrate(t.Context(), db); err != nil {
			t.Fatalf("Migrate again: %v", err)
		}
	}
	var n, v int
	if err := db.QueryRow(`SELECT count(*), max(version) FROM reliar_migrations`).Scan(&n, &v); err != nil {
		t.Fatal(err)
	}
	if n != sqlitestore.SchemaVersion || v != sqlitestore.SchemaVersion {
		t.Fatalf("%d migrations recorded, latest %d; want %d", n, v, sqlitestore.SchemaVersion)
	}
}

// Several processes migrating one file at once: one applies, the others wait
// for its immediate transaction and find nothing left to do.
func TestMigrateConcurrently(t *testing.T) {
	path := filepath.Join(t.TempDir(), "outbox.db")
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		db := openDB(t, path)
		wg.Go(func() { errs <- sqlitestore.Migrate(t.Context(), db) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("Migrate: %v", err)
		}
	}
	if _, err := sqlitestore.New(t.Context(), openDB(t, path)); err != nil {
		t.Fatalf("New after concurrent migrations: %v", err)
	}
}

func TestNewRefusesUnmigratedDatabase(t *testing.T) {
	tests := []struct {
		name  string
		setup string
	}{
		{name: "empty database"},
		{name: "empty version table", setup: `CREATE TABLE reliar_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := openDB(t, filepath.Join(t.TempDir(), "x.db"))
			if tt.setup != "" {
				if _, err := db.Exec(tt.setup); err != nil {
					t.Fatal(err)
				}
			}
			_, err := sqlitestore.New(t.Context(), db)
			var nm *sqlitestore.NotMigratedError
			if !errors.As(err, &nm) || !errors.Is(err, sqlitestore.ErrNotMigrated) {
				t.Fatalf("New: %v, want a NotMigratedError", err)
			}
			if nm.Have != 0 || nm.Want != sqlitestore.SchemaVersion {
				t.Errorf("Have %d Want %d", nm.Have, nm.Want)
			}
			if !reliar.IsPermanent(err) {
				t.Error("not-migrated is not permanent")
			}
		})
	}
}

func TestNewRefusesBadOptions(t *testing.T) {
	db, _ := newDB(t)
	tests := []struct {
		name string
		opt  sqlitestore.Option
	}{
		{"nil clock", sqlitestore.WithClock(nil)},
		{"nil serializer", sqlitestore.WithSerializer(nil)},
		{"zero payload limit", sqlitestore.WithMaxPayloadBytes(0)},
		{"nil logger", sqlitestore.WithLogger(nil)},
		{"zero wake-up interval", sqlitestore.WithWakeupInterval(0)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := sqlitestore.New(t.Context(), db, tt.opt); !errors.Is(err, sqlitestore.ErrInvalidOption) {
				t.Fatalf("New: %v, want ErrInvalidOption", err)
			}
		})
	}
	if _, err := sqlitestore.New(t.Context(), nil); !errors.Is(err, sqlitestore.ErrInvalidOption) {
		t.Fatalf("New(nil db): %v", err)
	}
}

func TestMigrationsFS(t *testing.T) {
	fsys := sqlitestore.Migrations()
	ups, err := fs.Glob(fsys, "*.up.sql")
	if err != nil {
		t.Fatal(err)
	}
	downs, err := fs.Glob(fsys, "*.down.sql")
	if err != nil {
		t.Fatal(err)
	}
	if len(ups) != sqlitestore.SchemaVersion || len(downs) != len(ups) {
		t.Fatalf("up %v down %v, want %d of each", ups, downs, sqlitestore.SchemaVersion)
	}
	// The files apply as they are: up, down in reverse order, up again.
	slices.Reverse(downs)
	db := openDB(t, filepath.Join(t.TempDir(), "x.db"))
	for _, name := range slices.Concat(ups, downs, ups) {
		body, err := fs.ReadFile(fsys, name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(string(body)); err != nil {
			t.Fatalf("apply %s: %v", name, err)
		}
	}
}

// A database at version 1 (the outbox alone) is refused by New until
// Migrate adds the inbox table; its messages survive the upgrade.
func TestMigrateFromVersion1(t *testing.T) {
	ctx := t.Context()
	db := openDB(t, filepath.Join(t.TempDir(), "x.db"))
	v1, err := fs.ReadFile(sqlitestore.Migrations(), "0001_outbox.up.sql")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, string(v1)); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `CREATE TABLE reliar_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT;
		INSERT INTO reliar_migrations VALUES (1, '0001_outbox.up.sql', 0);
		INSERT INTO outbox (id, message_type, payload) VALUES ('0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b', 'kept', x'7b7d')`); err != nil {
		t.Fatal(err)
	}
	target.UpgradeFromVersion1(t, db)
}
