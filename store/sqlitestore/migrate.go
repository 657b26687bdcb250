package sqlitestore

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver/outboxsql"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// versionTable records the applied migrations, one row per version.
const versionTable = outboxsql.VersionTable

// Migrations returns the store's versioned SQL migrations, named
// NNNN_name.up.sql and NNNN_name.down.sql, for teams that apply them with their
// own tool (goose, golang-migrate, Atlas). Such a tool must also record the
// version in the reliar_migrations table, or [New] reports the schema as
// not migrated; [Migrate] does both.
func Migrations() fs.FS {
	return outboxsql.MustSub(migrationFiles, "migrations")
}

// loadMigrations reads the embedded migrations in version order.
func loadMigrations() ([]outboxsql.Migration, error) {
	ms, err := outboxsql.LoadMigrations(Migrations())
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: %w", err)
	}
	return ms, nil
}

// SchemaVersion is the schema version this release needs: the number of its
// latest migration (1 creates the outbox table, 2 the inbox's
// processed_messages table). New refuses a database below it.
const SchemaVersion = 2

// ErrNotMigrated is matched (with errors.Is) by a *NotMigratedError.
var ErrNotMigrated = errors.New("sqlitestore: schema not migrated")

// NotMigratedError reports a database whose schema is older than this
// release needs. Run [Migrate] (or `reliar migrate`).
type NotMigratedError struct {
	// Have is the database's schema version; 0 when it has none.
	Have int
	// Want is the version this release needs.
	Want int
}

func (e *NotMigratedError) Error() string {
	return fmt.Sprintf("sqlitestore: schema version %d, want %d: run the migrations", e.Have, e.Want)
}

// Is matches ErrNotMigrated.
func (e *NotMigratedError) Is(target error) bool { return target == ErrNotMigrated }

// FailureKind is permanent: the schema does not migrate itself.
func (e *NotMigratedError) FailureKind() reliar.FailureKind { return reliar.FailurePermanent }

// Migrate brings the database's schema up to date. It is idempotent, and safe
// to run from several processes at once: it runs in one BEGIN IMMEDIATE
// transaction, so one process migrates while the others wait and then find
// nothing left to do. It takes the options of New (so that one option list
// serves both) and validates them.
func Migrate(ctx context.Context, db *sql.DB, opts ...Option) error {
	if db == nil {
		return fmt.Errorf("%w: nil *sql.DB", ErrInvalidOption)
	}
	if _, err := applyOptions(opts); err != nil {
		return err
	}
	ms, err := loadMigrations()
	if err != nil {
		return err
	}
	return immediate(ctx, db, "migrate", func(q querier) error {
		if _, err := q.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS `+versionTable+` (
			version    INTEGER PRIMARY KEY,
			name       TEXT    NOT NULL,
			applied_at INTEGER NOT NULL
		) STRICT`); err != nil {
			return wrapErr("migrate", err)
		}
		have, err := appliedVersion(ctx, q)
		if err != nil {
			return err
		}
		for _, m := range ms {
			if m.Version <= have {
				continue
			}
			if _, err := q.ExecContext(ctx, m.SQL); err != nil {
				return wrapErr("migrate", fmt.Errorf("apply %s: %w", m.Name, err))
			}
			if _, err := q.ExecContext(ctx,
				`INSERT INTO `+versionTable+` (version, name, applied_at) VALUES (?, ?, CAST(unixepoch('subsec') * 1000000 AS INTEGER))`,
				m.Version, m.Name); err != nil {
				return wrapErr("migrate", err)
			}
		}
		return nil
	})
}

// appliedVersion returns the latest applied migration, 0 when the version
// table is missing or empty.
func appliedVersion(ctx context.Context, q querier) (int, error) {
	v, err := outboxsql.AppliedVersion(ctx, q, `SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?`)
	return v, wrapErr("schema version", err)
}

// checkSchema returns a *NotMigratedError when the database is behind.
func checkSchema(ctx context.Context, db *sql.DB) error {
	have, err := appliedVersion(ctx, db)
	if err != nil {
		return err
	}
	if have < SchemaVersion {
		return &NotMigratedError{Have: have, Want: SchemaVersion}
	}
	return nil
}
