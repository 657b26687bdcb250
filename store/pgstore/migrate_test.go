package pgstore

import (
	"errors"
	"io/fs"
	"slices"
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
		if err := Migrate(ctx, sharedPool, WithSchema(schema)); err != nil {
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
		wg.Go(func() { errs[i] = Migrate(ctx, sharedPool, WithSchema(schema)) })
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
			var nm *NotMigratedError
			if !errors.As(err, &nm) {
				t.Fatalf("New = %v, want *NotMigratedError", err)
			}
			if nm.Have != 0 || nm.Want != SchemaVersion || nm.Schema != schema {
				t.Errorf("ErrNotMigrated = %+v, want Have 0, Want %d", nm, SchemaVersion)
			}
			if !errors.Is(err, ErrNotMigrated) || !reliar.IsPermanent(err) {
				t.Errorf("errors.Is(ErrNotMigrated) = false or not permanent: %v", err)
			}
		})
	}
}

func TestMigrationsFS(t *testing.T) {
	t.Parallel()
	fsys, err := Migrations()
	if err != nil {
		t.Fatal(err)
	}
	if err := fstest.TestFS(fsys, "0001_outbox.up.sql", "0001_outbox.down.sql", "0002_inbox.up.sql", "0002_inbox.down.sql"); err != nil {
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
	up2, err := fs.ReadFile(fsys, "0002_inbox.up.sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`CREATE TABLE "public".processed_messages`, `ON "public".processed_messages (processed_at)`, `VALUES (2, 'inbox')`} {
		if !strings.Contains(string(up2), want) {
			t.Errorf("rendered inbox migration lacks %q", want)
		}
	}
	other, err := Migrations(WithSchema("tenant_7"))
	if err != nil {
		t.Fatal(err)
	}
	up7, _ := fs.ReadFile(other, "0001_outbox.up.sql")
	if !strings.Contains(string(up7), `CREATE TABLE "tenant_7".outbox`) || strings.Contains(string(up7), `"public"`) {
		t.Error("Migrations(WithSchema(tenant_7)) is not rendered for tenant_7")
	}
	migs, err := loadMigrations(mustNames(t, "public"))
	if err != nil {
		t.Fatal(err)
	}
	if last := migs[len(migs)-1].version; last != SchemaVersion {
		t.Errorf("highest embedded migration is %d, SchemaVersion is %d", last, SchemaVersion)
	}
}

// Teams that apply the files with golang-migrate or goose get a schema New
// accepts, and each down file takes the schema back one version.
func TestMigrationsAppliedExternally(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	schema := newSchemaName(t)
	fsys, err := Migrations(WithSchema(schema))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sharedPool.Exec(ctx, `CREATE SCHEMA "`+schema+`"`); err != nil {
		t.Fatal(err)
	}
	ups, _ := fs.Glob(fsys, "*.up.sql")
	downs, _ := fs.Glob(fsys, "*.down.sql")
	if len(ups) != SchemaVersion || len(downs) != SchemaVersion {
		t.Fatalf("%d up and %d down files, want %d of each", len(ups), len(downs), SchemaVersion)
	}
	for _, file := range ups {
		up, _ := fs.ReadFile(fsys, file)
		// A file whose steps include one outside a transaction (CREATE
		// INDEX CONCURRENTLY) is applied step by step, as the migration
		// tools do with a "no transaction" file; any other file whole.
		steps, err := splitSteps(string(up))
		if err != nil {
			t.Fatal(err)
		}
		whole := !slices.ContainsFunc(steps, func(st step) bool { return st.noTx })
		if whole {
			steps = []step{{sql: string(up)}}
		}
		for _, st := range steps {
			if _, err := sharedPool.Exec(ctx, st.sql); err != nil {
				t.Fatalf("apply %s: %v", file, err)
			}
		}
	}
	if _, err := New(ctx, sharedPool, WithSchema(schema), WithLogger(quietLogger())); err != nil {
		t.Fatalf("New: %v", err)
	}
	if err := Migrate(ctx, sharedPool, WithSchema(schema)); err != nil {
		t.Fatalf("Migrate over an externally migrated schema: %v", err)
	}
	for i := len(downs) - 1; i >= 0; i-- {
		down, _ := fs.ReadFile(fsys, downs[i])
		if _, err := sharedPool.Exec(ctx, string(down)); err != nil {
			t.Fatalf("apply %s: %v", downs[i], err)
		}
		_, err := New(ctx, sharedPool, WithSchema(schema))
		var nm *NotMigratedError
		if !errors.As(err, &nm) || nm.Have != i {
			t.Fatalf("New after %s = %v, want ErrNotMigrated at version %d", downs[i], err, i)
		}
	}
}

// A schema left at version 1 by the previous release is refused by New and
// brought to SchemaVersion by Migrate, its messages kept.
func TestMigrateUpgradesVersion1(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	schema := newSchemaName(t)
	fsys, err := Migrations(WithSchema(schema))
	if err != nil {
		t.Fatal(err)
	}
	up1, _ := fs.ReadFile(fsys, "0001_outbox.up.sql")
	if _, err := sharedPool.Exec(ctx, `CREATE SCHEMA "`+schema+`"`); err != nil {
		t.Fatal(err)
	}
	if _, err := sharedPool.Exec(ctx, string(up1)); err != nil {
		t.Fatal(err)
	}
	n := mustNames(t, schema)
	id := reliar.NewMessageID()
	if _, err := sharedPool.Exec(ctx, n.render(`INSERT INTO {{table}} (id, message_type, payload) VALUES ($1, 'orders.placed', '{}')`), id.String()); err != nil {
		t.Fatal(err)
	}

	_, err = New(ctx, sharedPool, WithSchema(schema))
	var nm *NotMigratedError
	if !errors.As(err, &nm) || *nm != (NotMigratedError{Store: "pgstore", Schema: schema, Have: 1, Want: SchemaVersion}) {
		t.Fatalf("New on version 1 = %v, want NotMigratedError{Have: 1, Want: SchemaVersion}", err)
	}
	if !reliar.IsPermanent(err) {
		t.Errorf("ErrNotMigrated is not permanent")
	}

	for range 2 {
		if err := Migrate(ctx, sharedPool, WithSchema(schema)); err != nil {
			t.Fatalf("Migrate from version 1: %v", err)
		}
	}
	rows, err := sharedPool.Query(ctx, n.render(`SELECT version FROM {{schema}}.reliar_migrations ORDER BY version`))
	if err != nil {
		t.Fatal(err)
	}
	versions, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil || !slices.Equal(versions, []int{1, 2, 3, 4, 5, 6}) {
		t.Fatalf("recorded versions = %v (%v), want [1 2 3 4 5 6]", versions, err)
	}
	s, err := New(ctx, sharedPool, WithSchema(schema), WithLogger(quietLogger()))
	if err != nil {
		t.Fatalf("New after the upgrade: %v", err)
	}
	if st, err := s.Stats(ctx); err != nil || st.Due != 1 {
		t.Fatalf("Stats after the upgrade = %+v, %v; want the version-1 message due", st, err)
	}
	for i, want := range []bool{true, false} {
		var first bool
		err := pgx.BeginFunc(ctx, sharedPool, func(tx pgx.Tx) error {
			var err error
			first, err = s.Inbox().MarkProcessed(ctx, tx, "billing", id)
			return err
		})
		if err != nil || first != want {
			t.Fatalf("mark %d after the upgrade = %v, %v; want %v", i+1, first, err, want)
		}
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

// Version 3 leaves half of every new outbox page free, so that claims can
// update rows in place.
func TestMigratedOutboxFillsPagesToHalf(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	var opts []string
	err := sharedPool.QueryRow(t.Context(), s.n.render(`SELECT reloptions FROM pg_class WHERE oid = '{{table}}'::regclass`)).Scan(&opts)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(opts, "fillfactor=50") {
		t.Fatalf("outbox reloptions = %v, want fillfactor=50", opts)
	}
}

// One option list serves Migrate and New, so the schema migrated is the one
// dispatched; the options Migrate has no use for are accepted.
func TestOneOptionListMigratesAndOpensOneTable(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	opts := []Option{WithSchema(newSchemaName(t)), WithLogger(quietLogger()), WithAsyncCommit(), WithMaxPayloadBytes(1 << 10)}
	if err := Migrate(ctx, sharedPool, opts...); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	if _, err := New(ctx, sharedPool, opts...); err != nil {
		t.Fatalf("New over the migrated schema: %v", err)
	}
	if err := Migrate(ctx, sharedPool, append(opts, WithMaxPayloadBytes(0))...); !errors.Is(err, ErrInvalidOption) {
		t.Fatalf("Migrate with an invalid option = %v, want ErrInvalidOption", err)
	}
}
