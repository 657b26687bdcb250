package mysqlstore

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/reliar/reliar"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// SchemaVersion is the schema version this release needs: the number of its
// latest migration (1 creates the outbox table, 2 the inbox's
// processed_messages table). New refuses a database below it.
const SchemaVersion = 2

// versionTable records the applied migrations, one row per version.
const versionTable = "reliar_migrations"

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
	sub, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		// The directory is embedded at build time; fs.Sub fails only on
		// an invalid name.
		panic(err)
	}
	return sub
}

// migration is one versioned SQL file, split into statements.
type migration struct {
	version    int
	name       string
	statements []string
}

// loadMigrations reads the embedded up migrations in version order.
func loadMigrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".down.sql") {
			continue
		}
		prefix, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(prefix)
		if !ok || err != nil || !strings.HasSuffix(e.Name(), ".up.sql") {
			return nil, fmt.Errorf("mysqlstore: migration %q is not named NNNN_name.up.sql", e.Name())
		}
		body, err := fs.ReadFile(migrationFiles, "migrations/"+e.Name())
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: e.Name(), statements: splitStatements(string(body))})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	return out, nil
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

// ErrNotMigrated is matched (with errors.Is) by a *NotMigratedError.
var ErrNotMigrated = errors.New("mysqlstore: schema not migrated")

// NotMigratedError reports a database whose schema is older than this
// release needs. Run [Migrate] (or `reliar migrate`).
type NotMigratedError struct {
	// Have is the database's schema version; 0 when it has none.
	Have int
	// Want is the version this release needs.
	Want int
}

func (e *NotMigratedError) Error() string {
	return fmt.Sprintf("mysqlstore: schema version %d, want %d: run the migrations", e.Have, e.Want)
}

// Is matches ErrNotMigrated.
func (e *NotMigratedError) Is(target error) bool { return target == ErrNotMigrated }

// FailureKind is permanent: the schema does not migrate itself.
func (e *NotMigratedError) FailureKind() reliar.FailureKind { return reliar.FailurePermanent }

// Migrate brings the current database's schema up to date. It is idempotent
// and safe to run from several processes at once: a GET_LOCK named for the
// database lets one migrate while the others wait, then find nothing left to
// do. MariaDB commits every DDL statement at once, so each migration is
// written to be re-run safely after a crash halfway.
func Migrate(ctx context.Context, db *sql.DB) error {
	ms, err := loadMigrations()
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
	have, err := appliedVersion(ctx, conn)
	if err != nil {
		return err
	}
	for _, m := range ms {
		if m.version <= have {
			continue
		}
		for _, stmt := range m.statements {
			if _, err := conn.ExecContext(ctx, stmt); err != nil {
				return wrapErr("migrate", fmt.Errorf("apply %s: %w", m.name, err))
			}
		}
		if _, err := conn.ExecContext(ctx,
			`INSERT INTO `+versionTable+` (version, name, applied_at) VALUES (?, ?, UTC_TIMESTAMP(6))`,
			m.version, m.name); err != nil {
			return wrapErr("migrate", err)
		}
	}
	return nil
}

// appliedVersion returns the latest applied migration, 0 when the version
// table is missing or empty.
func appliedVersion(ctx context.Context, q querier) (int, error) {
	var exists int
	err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM information_schema.tables
		WHERE table_schema = DATABASE() AND table_name = ?`, versionTable).Scan(&exists)
	if err != nil {
		return 0, wrapErr("schema version", err)
	}
	if exists == 0 {
		return 0, nil
	}
	var v int
	if err := q.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM `+versionTable).Scan(&v); err != nil {
		return 0, wrapErr("schema version", err)
	}
	return v, nil
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
