package storeurl

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"sync"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox"
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
	return &sqliteBackend{db: db, path: path, scratch: scratch, opts: opts}, nil
}

func (sqliteDriver) migrationSQL(opts Options) ([]SQLFile, error) {
	if opts.Schema != "" {
		return nil, fmt.Errorf("%w: SQLite has no schemas; drop --schema", ErrBadOption)
	}
	return upFiles(sqlitestore.Migrations())
}

// sqliteBackend is a SQLite database file with the outbox in it.
type sqliteBackend struct {
	db      *sql.DB
	path    string
	scratch bool
	opts    Options

	mu    sync.Mutex
	store *sqlitestore.Store
}

func (b *sqliteBackend) Describe() string { return "sqlite " + b.path }

func (b *sqliteBackend) Migrate(ctx context.Context) (Migration, error) {
	from, err := b.version(ctx)
	if err != nil {
		return Migration{}, err
	}
	if err := sqlitestore.Migrate(ctx, b.db); err != nil {
		return Migration{}, err
	}
	to, err := b.version(ctx)
	if err != nil {
		return Migration{}, err
	}
	return Migration{From: from, To: to}, nil
}

// version reads the applied schema version, 0 when none.
func (b *sqliteBackend) version(ctx context.Context) (int, error) {
	var n int
	err := b.db.QueryRowContext(ctx,
		`SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'reliar_migrations'`).Scan(&n)
	if err != nil || n == 0 {
		return 0, wrapVersionErr(err)
	}
	var v int
	err = b.db.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM reliar_migrations`).Scan(&v)
	return v, wrapVersionErr(err)
}

func wrapVersionErr(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("read schema version: %w", err)
}

func (b *sqliteBackend) Store(ctx context.Context) (outbox.Store, error) {
	s, err := b.sqliteStore(ctx)
	if err != nil {
		return nil, err
	}
	return s, nil
}

func (b *sqliteBackend) sqliteStore(ctx context.Context) (*sqlitestore.Store, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.store != nil {
		return b.store, nil
	}
	s, err := sqlitestore.New(ctx, b.db, sqlitestore.WithLogger(b.opts.logger()))
	if err != nil {
		return nil, err
	}
	b.store = s
	return s, nil
}

func (b *sqliteBackend) Begin(ctx context.Context) (Tx, error) {
	s, err := b.sqliteStore(ctx)
	if err != nil {
		return nil, err
	}
	tx, err := b.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("begin: %w", err)
	}
	return &sqlTx{tx: tx, enqueue: s.Enqueue}, nil
}

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

// sqlTx is a database/sql transaction and the enqueue of its store.
type sqlTx struct {
	tx      *sql.Tx
	enqueue func(ctx context.Context, tx *sql.Tx, msgs ...reliar.Outgoing) ([]reliar.MessageID, error)
}

func (t *sqlTx) Exec(ctx context.Context, query string, args ...any) error {
	_, err := t.tx.ExecContext(ctx, query, args...)
	return err
}

func (t *sqlTx) Enqueue(ctx context.Context, msgs ...reliar.Outgoing) ([]reliar.MessageID, error) {
	return t.enqueue(ctx, t.tx, msgs...)
}

func (t *sqlTx) Commit(context.Context) error { return t.tx.Commit() }

func (t *sqlTx) Rollback(context.Context) error {
	if err := t.tx.Rollback(); err != nil && !errors.Is(err, sql.ErrTxDone) {
		return err
	}
	return nil
}
