package mysqlstore

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver/outboxsql"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// SchemaVersion is the schema version this release needs: the number of its
// latest migration (1 creates the outbox table, 2 the inbox's
// processed_messages table, 3 stores the ids of rows inserted with plain SQL
// in their canonical lower-case form). New refuses a database below it.
const SchemaVersion = 3

// versionTable records the applied migrations, one row per version.
const versionTable = outboxsql.VersionTable

// migrateLock is the GET_LOCK name that serialises Migrate, per database.
const migrateLock = "reliar.migrate."

// migrateLockWait is how long Migrate waits for another process's migration.
const migrateLockWait = 60 * time.Second

// Migrations returns the store's versioned SQL migrations, named
// NNNN_name.up.sql and NNNN_name.down.sql, for teams that apply them with
// their own tool (goose, golang-migrate, Atlas). Such a tool must also record
// the version in the reliar_migrations table, or [New] reports the schema as
// not migrated; [Migrate] does both.
func Migrations() fs.FS {
	return outboxsql.MustSub(migrationFiles, "migrations")
}

// splitStatements splits a migration at the semicolons that end its lines,
// dropping comment lines, so that it runs without multiStatements=true. The
// migrations hold no semicolon inside a string.
func splitStatements(sql string) []string {
	var out []string
	var cur strings.Builder
	for line := range strings.SplitSeq(sql, "\n") {
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "--") {
			continue
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
		if strings.HasSuffix(trimmed, ";") {
			out = append(out, strings.TrimSuffix(strings.TrimSpace(cur.String()), ";"))
			cur.Reset()
		}
	}
	if s := strings.TrimSpace(cur.String()); s != "" {
		out = append(out, s)
	}
	return out
}

// schema is what New and Migrate know of the store's migrations.
var schema = outboxsql.Schema{
	Store:   "mysqlstore",
	Invalid: ErrInvalidOption,
	Files:   Migrations(),
	Version: SchemaVersion,
	Exists: `SELECT COUNT(*) FROM information_schema.tables
		WHERE table_schema = DATABASE() AND table_name = ?`,
	Wrap: wrapErr,
}

// Migrate brings the current database's schema up to date. It is idempotent
// and safe to run from several processes at once: a GET_LOCK named for the
// database lets one migrate while the others wait, then find nothing left to
// do. MariaDB commits every DDL statement at once, so each migration is
// written to be re-run safely after a crash halfway. It takes the options of
// New (so that one option list serves both) and validates them.
func Migrate(ctx context.Context, db *sql.DB, opts ...Option) error {
	ms, err := schema.Prepare(db, func() error { _, err := applyOptions(opts); return err })
	if err != nil {
		return err
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return wrapErr("migrate", err)
	}
	defer conn.Close()
	unlock, ok, err := getLock(ctx, conn, migrateLock, migrateLockWait)
	if err != nil {
		return wrapErr("migrate", err)
	}
	if !ok {
		return &Error{Op: "migrate", Kind: reliar.FailureTransient,
			Err: fmt.Errorf("another migration held the lock for %v", migrateLockWait)}
	}
	defer unlock()
	if _, err := conn.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS `+versionTable+` (
		version    INT          NOT NULL PRIMARY KEY,
		name       VARCHAR(255) NOT NULL,
		applied_at DATETIME(6)  NOT NULL
	) ENGINE = InnoDB`); err != nil {
		return wrapErr("migrate", err)
	}
	have, err := schema.Applied(ctx, conn)
	if err != nil {
		return err
	}
	for _, m := range ms {
		if m.Version <= have {
			continue
		}
		for _, stmt := range splitStatements(m.SQL) {
			if _, err := conn.ExecContext(ctx, stmt); err != nil {
				return wrapErr("migrate", fmt.Errorf("apply %s: %w", m.Name, err))
			}
		}
		if _, err := conn.ExecContext(ctx,
			`INSERT INTO `+versionTable+` (version, name, applied_at) VALUES (?, ?, UTC_TIMESTAMP(6))`,
			m.Version, m.Name); err != nil {
			return wrapErr("migrate", err)
		}
	}
	return nil
}
