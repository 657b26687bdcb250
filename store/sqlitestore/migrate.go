package sqlitestore

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"

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

// SchemaVersion is the schema version this release needs: the number of its
// latest migration (1 creates the outbox table, 2 the inbox's
// processed_messages table). New refuses a database below it.
const SchemaVersion = 2

// schema is what New and Migrate know of the store's migrations.
var schema = outboxsql.Schema{
	Store:   "sqlitestore",
	Invalid: ErrInvalidOption,
	Files:   Migrations(),
	Version: SchemaVersion,
	Exists:  `SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?`,
	Wrap:    wrapErr,
}

// Migrate brings the database's schema up to date. It is idempotent, and safe
// to run from several processes at once: it runs in one BEGIN IMMEDIATE
// transaction, so one process migrates while the others wait and then find
// nothing left to do. It takes the options of New (so that one option list
// serves both) and validates them.
func Migrate(ctx context.Context, db *sql.DB, opts ...Option) error {
	ms, err := schema.Prepare(db, func() error { _, err := applyOptions(opts); return err })
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
		have, err := schema.Applied(ctx, q)
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
