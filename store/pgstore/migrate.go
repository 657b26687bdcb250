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
// refuses a schema below it with *NotMigratedError. Version 1 is the outbox
// table, version 2 adds the inbox's processed_messages table, version 3
// fills the outbox table's pages to half so that claims update rows in place,
// version 4 refuses values no claim can read (infinite times, versions
// outside 1-65535, negative counters), version 5 adds the index of fair
// claims (Fairness FairnessTenant), built concurrently, version 6 adds the
// reliar_leases table that holds the maintenance lease.
const SchemaVersion = 6

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migration is one versioned, rendered migration, split into its steps.
type migration struct {
	version int
	name    string
	steps   []step
}

// Migrations returns the migration files rendered for the schema of opts
// (WithSchema; "public" by default), named NNNN_name.up.sql and
// NNNN_name.down.sql, for teams that run their migrations with
// golang-migrate, goose or Atlas instead of [Migrate]. Every table, index and
// function is written schema-qualified and quoted.
//
// A file without a "-- reliar:step" line is one transaction. A file with
// such lines is run step by step, each step committed before the next
// begins: applied whole in one transaction it still works, but holds its
// locks for the whole file (a NOT VALID constraint's lock through its
// validation). A step whose marker says "no-transaction" must run outside
// any transaction (goose: "-- +goose NO TRANSACTION" in a file of its own).
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
		steps, err := splitSteps(string(body))
		if err != nil {
			return nil, fmt.Errorf("pgstore: migration %s: %w", file, err)
		}
		out = append(out, migration{version: version, name: strings.TrimSuffix(rest, ".up.sql"), steps: steps})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	return out, nil
}

// Migrate brings the outbox schema up to SchemaVersion. It creates the schema
// when missing and applies, in version order, every migration not yet
// recorded in its reliar_migrations table (each migration records itself
// there). It is safe to run at every start-up, from several processes at
// once and while producers and dispatchers work on the table:
//
//   - A session-level advisory lock on the schema serialises Migrate calls
//     (and the single-transaction Migrate of earlier releases): one process
//     migrates, the others wait and then find nothing to do.
//   - A migration runs as one or more steps. A step is a transaction of its
//     own, run with a short lock_timeout and retried when the lock it needs
//     is taken, so that a long transaction elsewhere never makes the table's
//     readers and writers queue behind a waiting ALTER TABLE. A step marked
//     no-transaction (CREATE INDEX CONCURRENTLY, which PostgreSQL refuses
//     inside a transaction) runs alone; an index such a step left INVALID
//     when it was interrupted is dropped and built again.
//   - Every step is idempotent, and a migration records its version in its
//     last step, so a Migrate interrupted anywhere (a crash, a cancelled
//     context) is finished by the next one.
//
// Constraints are added NOT VALID and validated in a later step, which reads
// the table without blocking writes; indexes are built CONCURRENTLY.
// BENCHMARKS.md has the commit latency producers saw while a migration ran
// on a table of a million rows.
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
	migrations, err := loadMigrations(n)
	if err != nil {
		return err
	}
	pooled, err := behindPooler(ctx, pool)
	if err != nil {
		return wrapErr("check for a pooler", err)
	}
	if pooled {
		return ErrNeedsDirectConnection
	}
	return migrate(ctx, pool, n, migrations)
}

// migrate applies migrations under the schema's migration lock.
func migrate(ctx context.Context, pool *pgxpool.Pool, n names, migrations []migration) error {
	err := withMigrationLock(ctx, pool, n, func(conn *pgx.Conn) error {
		setup := n.render(`CREATE SCHEMA IF NOT EXISTS {{schema}};
CREATE TABLE IF NOT EXISTS {{schema}}.reliar_migrations (
    version    integer     PRIMARY KEY,
    name       text        NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
)`)
		if err := runStep(ctx, conn, n, step{sql: setup}); err != nil {
			return err
		}
		have, err := schemaVersion(ctx, conn, n)
		if err != nil {
			return err
		}
		for _, m := range migrations {
			if m.version <= have {
				continue
			}
			for i, st := range m.steps {
				if err := runStep(ctx, conn, n, st); err != nil {
					return fmt.Errorf("migration %d (%s), step %d of %d: %w", m.version, m.name, i+1, len(m.steps), err)
				}
			}
		}
		now, err := schemaVersion(ctx, conn, n)
		if err == nil && len(migrations) > 0 && now < migrations[len(migrations)-1].version {
			err = fmt.Errorf("migrations left the schema at version %d, want %d", now, migrations[len(migrations)-1].version)
		}
		return err
	})
	if err != nil {
		return wrapErr("migrate schema "+n.schema, err)
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
