package pgstore

import (
	"errors"
	"io/fs"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/jackc/pgx/v5"
	"github.com/reliar/reliar"
)

func TestMigrateIsIdempotent(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	schema := newSchemaName(t)
	for range 3 {
		if err := Migrate(ctx, sharedPool, schema); err != nil {
			t.Fatalf("Migrate: %v", err)
		}
	}
	var versions []int
	rows, err := sharedPool.Query(ctx, `SELECT version FROM "`+schema+`".reliar_migrations ORDER BY version`)
	if err == nil {
		versions, err = pgx.CollectRows(rows, pgx.RowTo[int])
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(versions) != SchemaVersion || versions[len(versions)-1] != SchemaVersion {
		t.Fatalf("recorded versions = %v, want 1..%d once each", versions, SchemaVersion)
	}
	if _, err := New(ctx, sharedPool, WithSchema(schema), WithLogger(quietLogger())); err != nil {
		t.Fatalf("New after Migrate: %v", err)
	}
}

func TestMigrateConcurrently(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	schema := newSchemaName(t)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { errs[i] = Migrate(ctx, sharedPool, schema) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Migrate #%d: %v", i, err)
		}
	}
	var n int
	if err := sharedPool.QueryRow(ctx, `SELECT count(*) FROM "`+schema+`".reliar_migrations`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != SchemaVersion {
		t.Fatalf("%d migrations recorded, want %d", n, SchemaVersion)
	}
}

func TestNewRefusesUnmigratedSchema(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	tests := []struct {
		name  string
		setup string
	}{
		{"no schema", ""},
		{"empty schema", `CREATE SCHEMA "%s"`},
		{"version table without versions", `CREATE SCHEMA "%s"; CREATE TABLE "%s".reliar_migrations (version int PRIMARY KEY, name text NOT NULL)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			schema := newSchemaName(t)
			if tt.setup != "" {
				if _, err := sharedPool.Exec(ctx, strings.ReplaceAll(tt.setup, "%s", schema)); err != nil {
					t.Fatal(err)
				}
			}
			_, err := New(ctx, sharedPool, WithSchema(schema))
			var nm *ErrNotMigrated
			if !errors.As(err, &nm) {
				t.Fatalf("New = %v, want *ErrNotMigrated", err)
			}
			if nm.Have != 0 || nm.Want != SchemaVersion || nm.Schema != schema {
				t.Errorf("ErrNotMigrated = %+v, want Have 0, Want %d", nm, SchemaVersion)
			}
			if !errors.Is(err, &ErrNotMigrated{}) || !reliar.IsPermanent(err) {
				t.Errorf("errors.Is(&ErrNotMigrated{}) = false or not permanent: %v", err)
			}
		})
	}
}

func TestMigrationsFS(t *testing.T) {
	t.Parallel()
	fsys := Migrations()
	if err := fstest.TestFS(fsys, "0001_outbox.up.sql", "0001_outbox.down.sql"); err != nil {
		t.Fatal(err)
	}
	up, err := fs.ReadFile(fsys, "0001_outbox.up.sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`CREATE TABLE "public".outbox`, `INSERT INTO "public".reliar_migrations`, `pg_notify('reliar.public.outbox'`} {
		if !strings.Contains(string(up), want) {
			t.Errorf("rendered migration lacks %q", want)
		}
	}
	if strings.Contains(string(up), "{{") {
		t.Error("rendered migration still holds a placeholder")
	}
	other, err := MigrationsFor("tenant_7")
	if err != nil {
		t.Fatal(err)
	}
	up7, _ := fs.ReadFile(other, "0001_outbox.up.sql")
	if !strings.Contains(string(up7), `CREATE TABLE "tenant_7".outbox`) || strings.Contains(string(up7), `"public"`) {
		t.Error("MigrationsFor(tenant_7) is not rendered for tenant_7")
	}
	migs, err := loadMigrations(mustNames(t, "public"))
	if err != nil {
		t.Fatal(err)
	}
	if last := migs[len(migs)-1].version; last != SchemaVersion {
		t.Errorf("highest embedded migration is %d, SchemaVersion is %d", last, SchemaVersion)
	}
}

// Teams that apply the files with golang-migrate or goose get a schema New accepts.
func TestMigrationsAppliedExternally(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	schema := newSchemaName(t)
	fsys, err := MigrationsFor(schema)
	if err != nil {
		t.Fatal(err)
	}
	up, _ := fs.ReadFile(fsys, "0001_outbox.up.sql")
	down, _ := fs.ReadFile(fsys, "0001_outbox.down.sql")
	if _, err := sharedPool.Exec(ctx, `CREATE SCHEMA "`+schema+`"`); err != nil {
		t.Fatal(err)
	}
	if _, err := sharedPool.Exec(ctx, string(up)); err != nil {
		t.Fatalf("apply up: %v", err)
	}
	if _, err := New(ctx, sharedPool, WithSchema(schema), WithLogger(quietLogger())); err != nil {
		t.Fatalf("New: %v", err)
	}
	if err := Migrate(ctx, sharedPool, schema); err != nil {
		t.Fatalf("Migrate over an externally migrated schema: %v", err)
	}
	if _, err := sharedPool.Exec(ctx, string(down)); err != nil {
		t.Fatalf("apply down: %v", err)
	}
	if _, err := New(ctx, sharedPool, WithSchema(schema)); !errors.Is(err, &ErrNotMigrated{}) {
		t.Fatalf("New after down = %v, want ErrNotMigrated", err)
	}
}

func mustNames(t *testing.T, schema string) names {
	t.Helper()
	n, err := newNames(schema)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
