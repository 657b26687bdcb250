package storeurl

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"time"

	"github.com/reliar/reliar/store/sqlitestore"
)

// sqliteDriver opens sqlitestore on a database file:
// sqlite://relative/path.db, sqlite:///absolute/path.db or sqlite:path.db.
type sqliteDriver struct{}

func (sqliteDriver) name() string      { return "sqlite" }
func (sqliteDriver) schemes() []string { return []string{"sqlite"} }

func (sqliteDriver) validate(u *url.URL, raw string) error {
	_, err := sqlitePath(u, raw)
	return err
}

// sqlitePath returns the file a sqlite URL names.
func sqlitePath(u *url.URL, raw string) (string, error) {
	path := u.Opaque
	if path == "" {
		path = u.Host + u.Path
	}
	switch {
	case path == "":
		return "", badURL(raw, "no file path (want sqlite://relative/path.db or sqlite:///absolute/path.db)")
	case path == ":memory:":
		return "", badURL(raw, "an in-memory database is one database per connection; use a file")
	case u.RawQuery != "":
		return "", badURL(raw, "query parameters are not supported; the store sets its own")
	case u.User != nil:
		return "", badURL(raw, "a file path takes no user")
	}
	return path, nil
}

func (sqliteDriver) open(ctx context.Context, l Location, opts Options, scratch bool) (Backend, error) {
	if opts.Schema != "" && !scratch {
		return nil, fmt.Errorf("%w: SQLite has no schemas; drop --schema", ErrBadOption)
	}
	path, err := sqlitePath(l.url, l.raw)
	if err != nil {
		return nil, err
	}
	if scratch {
		if _, err := os.Stat(path); err == nil {
			return nil, badURL(l.raw, "the file exists; give the path of a new file, which is removed afterwards")
		}
	}
	db, err := sqlitestore.Open(path)
	if err != nil {
		return nil, err
	}
	if opts.MaxConns > 0 {
		db.SetMaxOpenConns(opts.MaxConns)
	}
	return &sqliteBackend{sqlBackend: sqlBackend{
		db:      db,
		migrate: func(ctx context.Context, db *sql.DB) error { return sqlitestore.Migrate(ctx, db) },
		newStore: func(ctx context.Context, db *sql.DB) (sqlStore, error) {
			storeOpts := []sqlitestore.Option{sqlitestore.WithLogger(opts.logger())}
			if opts.AsyncCommit {
				storeOpts = append(storeOpts, sqlitestore.WithAsyncCommit())
			}
			return sqlitestore.New(ctx, db, storeOpts...)
		},
		hasMigrationsTable: `SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'reliar_migrations'`,
		timeArg:            func(t time.Time) any { return t.UnixMicro() },
	}, path: path, scratch: scratch}, nil
}

func (sqliteDriver) poolSize(Location) int { return 0 }

func (sqliteDriver) listenerConns() int { return 1 }

func (sqliteDriver) migrationSQL(opts Options) ([]SQLFile, error) {
	if opts.Schema != "" {
		return nil, fmt.Errorf("%w: SQLite has no schemas; drop --schema", ErrBadOption)
	}
	return upFiles(sqlitestore.Migrations())
}

// sqliteBackend is a SQLite database file with the outbox in it.
type sqliteBackend struct {
	sqlBackend
	path    string
	scratch bool
}

func (b *sqliteBackend) Describe() string { return "sqlite " + b.path }

func (b *sqliteBackend) Dialect() Dialect {
	return Dialect{Bind: questionMarks, Table: func(name string) string { return `"` + name + `"` }}
}

func (b *sqliteBackend) Close(context.Context) error {
	err := b.db.Close()
	if b.scratch {
		for _, suffix := range []string{"", "-wal", "-shm"} {
			if rmErr := os.Remove(b.path + suffix); rmErr != nil && !errors.Is(rmErr, os.ErrNotExist) {
				err = errors.Join(err, rmErr)
			}
		}
	}
	return err
}
