// Package sqliteenv opens the SQLite database file of a benchmark run with
// the settings Reliar's SQLite store uses, for Reliar and River alike: the
// data source name of sqlitestore.DSN (WAL journaling, synchronous=FULL, a
// busy timeout of sqlitestore.BusyTimeout, foreign keys on, BEGIN
// IMMEDIATE for every transaction) on the modernc.org/sqlite driver, and the
// same limit of open connections.
package sqliteenv

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/reliar/reliar/store/sqlitestore"
)

// DefaultConns is the limit of open connections of a run's handle unless a
// system says otherwise: what `reliar demo` gives its SQLite store (one
// connection that writers queue for in Go, and one more), and within
// River's advice for its SQLite driver (few connections, ideally one, to
// avoid SQLITE_BUSY).
const DefaultConns = 2

// FileName is the database file's name in the run's directory.
const FileName = "bench.db"

// Open opens (creating it) the database file of the run whose directory is
// dir, with at most conns open connections (DefaultConns when conns <= 0),
// and checks that it can be used. With queued, it opens it the way Reliar's
// documentation says to, with sqlitestore.Open, whose handle queues its
// writers in Go instead of SQLite's busy handler (same DSN); River's runs
// open it with sql.Open, which is what River's driver takes.
func Open(ctx context.Context, dir string, conns int, queued bool) (*sql.DB, error) {
	if dir == "" {
		return nil, errors.New("sqliteenv: the run has no directory")
	}
	if conns <= 0 {
		conns = DefaultConns
	}
	path := filepath.Join(dir, FileName)
	var db *sql.DB
	var err error
	if queued {
		db, err = sqlitestore.Open(path)
	} else {
		db, err = sql.Open(sqlitestore.DriverName, sqlitestore.DSN(path))
	}
	if err != nil {
		return nil, fmt.Errorf("sqliteenv: open %s: %w", path, err)
	}
	db.SetMaxOpenConns(conns)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqliteenv: open %s: %w", path, err)
	}
	return db, nil
}
