package outboxsql

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
)

// VersionTable records the applied migrations, one row per version.
const VersionTable = "reliar_migrations"

// Migration is one versioned SQL file.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// MustSub returns the directory dir of an embedded file system. The
// directory is embedded at build time, so fs.Sub fails only on an invalid
// name: a programming error, hence the panic.
func MustSub(fsys fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(fsys, dir)
	if err != nil {
		panic(err)
	}
	return sub
}

// LoadMigrations reads the up migrations at the root of fsys, named
// NNNN_name.up.sql, in version order; the down migrations are skipped.
func LoadMigrations(fsys fs.FS) ([]Migration, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, err
	}
	var out []Migration
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".down.sql") {
			continue
		}
		prefix, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(prefix)
		if !ok || err != nil || !strings.HasSuffix(e.Name(), ".up.sql") {
			return nil, fmt.Errorf("migration %q is not named NNNN_name.up.sql", e.Name())
		}
		body, err := fs.ReadFile(fsys, e.Name())
		if err != nil {
			return nil, err
		}
		out = append(out, Migration{Version: v, Name: e.Name(), SQL: string(body)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	return out, nil
}

// RowQuerier is a *sql.DB, *sql.Conn or *sql.Tx.
type RowQuerier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// AppliedVersion returns the latest migration recorded in VersionTable, 0
// when the table is missing or empty. exists is the dialect's query that
// counts the tables named by its one parameter.
func AppliedVersion(ctx context.Context, q RowQuerier, exists string) (int, error) {
	var n int
	if err := q.QueryRowContext(ctx, exists, VersionTable).Scan(&n); err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, nil
	}
	var v int
	if err := q.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM `+VersionTable).Scan(&v); err != nil {
		return 0, err
	}
	return v, nil
}
