package pgstore

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// SchemaVersion is the schema version this release of the store needs. New
// refuses a schema below it with *ErrNotMigrated. Version 1 is the outbox
// table, version 2 adds the inbox's processed_messages table, version 3
// fills the outbox table's pages to half so that claims update rows in place.
const SchemaVersion = 3

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migration is one versioned, rendered migration.
type migration struct {
	version int
	name    string
	up      string
}

// Migrations returns the migration files rendered for the schema of opts
// (WithSchema; "public" by default), named NNNN_name.up.sql and
// NNNN_name.down.sql, for teams that run their migrations with
// golang-migrate, goose or Atlas instead of [Migrate]. Every table, index and
// function is written schema-qualified and quoted.
func Migrations(opts ...Option) (fs.FS, error) {
	n, err := namesOf(opts)
	if err != nil {
		return nil, err
	}
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		return nil, fmt.Errorf("pgstore: read embedded migrations: %w", err)
	}
	files := make(map[string][]byte, len(entries))
	for _, e := range entries {
		raw, err := fs.ReadFile(migrationFiles, "migrations/"+e.Name())
		if err != nil {
			return nil, fmt.Errorf("pgstore: read embedded migration %s: %w", e.Name(), err)
		}
		files[e.Name()] = []byte(n.render(string(raw)))
	}
	return memFS{files: files}, nil
}

// render substitutes the placeholders of a migration or statement template.
func (n names) render(sql string) string {
	return strings.NewReplacer(
		"{{schema}}", n.quoted,
		"{{table}}", n.table,
		"{{channel}}", quoteLiteral(n.channel),
	).Replace(sql)
}

// loadMigrations returns the up migrations rendered for n, in version order.
func loadMigrations(n names) ([]migration, error) {
	fsys, err := Migrations(WithSchema(n.schema))
	if err != nil {
		return nil, err
	}
	files, err := fs.Glob(fsys, "*.up.sql")
	if err != nil {
		return nil, fmt.Errorf("pgstore: list migrations: %w", err)
	}
	var out []migration
	for _, file := range files {
		prefix, rest, ok := strings.Cut(file, "_")
		version, err := strconv.Atoi(prefix)
		if !ok || err != nil || version <= 0 {
			return nil, fmt.Errorf("pgstore: migration file %q is not named NNNN_name.up.sql", file)
		}
		body, err := fs.ReadFile(fsys, file)
		if err != nil {
			return nil, fmt.Errorf("pgstore: read migration %s: %w", file, err)
		}
		out = append(out, migration{version: version, name: strings.TrimSuffix(rest, ".up.sql"), up: string(body)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	return out, nil
}

// Migrate brings the outbox schema up to SchemaVersion. It creates the schema
// when missing, applies, in version order, every migration not yet recorded
// in its reliar_migrations table (each migration records itself there), and
// is safe to run at every start-up and from several processes at once: one
// transaction, serialised by an advisory lock on the schema, does all the
// work or none of it.
//
// It takes the options of New and migrates the schema they name (WithSchema),
// so that one option list migrates and dispatches the same table.
func Migrate(ctx context.Context, pool *pgxpool.Pool, opts ...Option) error {
	if pool == nil {
		return fmt.Errorf("%w: nil pool", ErrInvalidOption)
	}
	n, err := namesOf(opts)
	if err != nil {
		return err
	}
	schema := n.schema
	migrations, err := loadMigrations(n)
	if err != nil {
		return err
	}
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", advisoryKey("migrate", schema)); err != nil {
			return err
		}
		setup := n.render(`CREATE SCHEMA IF NOT EXISTS {{schema}};
CREATE TABLE IF NOT EXISTS {{schema}}.reliar_migrations (
    version    integer     PRIMARY KEY,
    name       text        NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
)`)
		if _, err := tx.Exec(ctx, setup); err != nil {
			return err
		}
		var have int
		if err := tx.QueryRow(ctx, n.render(`SELECT coalesce(max(version), 0) FROM {{schema}}.reliar_migrations`)).Scan(&have); err != nil {
			return err
		}
		for _, m := range migrations {
			if m.version <= have {
				continue
			}
			if _, err := tx.Exec(ctx, m.up); err != nil {
				return fmt.Errorf("migration %d (%s): %w", m.version, m.name, err)
			}
		}
		now, err := schemaVersion(ctx, tx, n)
		if err == nil && now < SchemaVersion {
			err = fmt.Errorf("migrations left the schema at version %d, want %d", now, SchemaVersion)
		}
		return err
	})
	if err != nil {
		return wrapErr("migrate schema "+schema, err)
	}
	return nil
}

// schemaVersion reads the applied schema version; 0 when nothing is applied.
func schemaVersion(ctx context.Context, q querier, n names) (int, error) {
	var have int
	err := q.QueryRow(ctx, n.render(`SELECT coalesce(max(version), 0) FROM {{schema}}.reliar_migrations`)).Scan(&have)
	if isUndefined(err) {
		return 0, nil
	}
	return have, err
}

// EnableNotifyTrigger installs the statement-level AFTER INSERT trigger that
// notifies dispatchers of rows inserted with plain SQL, outside Enqueue. It is
// idempotent. The equivalent SQL is
//
//	CREATE TRIGGER reliar_outbox_notify AFTER INSERT ON "schema".outbox
//	    FOR EACH STATEMENT EXECUTE FUNCTION "schema".reliar_outbox_notify();
//
// It takes the options of New and installs the trigger on the table of the
// schema they name.
func EnableNotifyTrigger(ctx context.Context, pool *pgxpool.Pool, opts ...Option) error {
	n, err := namesOf(opts)
	if err != nil {
		return err
	}
	sql := n.render(`DROP TRIGGER IF EXISTS reliar_outbox_notify ON {{table}};
CREATE TRIGGER reliar_outbox_notify AFTER INSERT ON {{table}}
    FOR EACH STATEMENT EXECUTE FUNCTION {{schema}}.reliar_outbox_notify()`)
	// Without arguments pgx sends the simple protocol: both statements run
	// in one implicit transaction.
	if _, err := pool.Exec(ctx, sql); err != nil {
		return wrapErr("enable notify trigger", err)
	}
	return nil
}

// DisableNotifyTrigger removes the trigger installed by EnableNotifyTrigger
// from the table of the schema opts name.
func DisableNotifyTrigger(ctx context.Context, pool *pgxpool.Pool, opts ...Option) error {
	n, err := namesOf(opts)
	if err != nil {
		return err
	}
	if _, err := pool.Exec(ctx, n.render(`DROP TRIGGER IF EXISTS reliar_outbox_notify ON {{table}}`)); err != nil {
		return wrapErr("disable notify trigger", err)
	}
	return nil
}
