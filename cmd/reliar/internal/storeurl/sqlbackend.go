package storeurl

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox"
)

// sqlStore is a database/sql outbox store: sqlitestore's and mysqlstore's.
type sqlStore interface {
	outbox.Store
	Enqueue(ctx context.Context, tx *sql.Tx, msgs ...reliar.Outgoing) ([]reliar.MessageID, error)
}

// sqlBackend is what the database/sql backends share; each sets the
// store's functions and how its dialect finds the migrations table.
type sqlBackend struct {
	db *sql.DB
	// migrate is the store's Migrate.
	migrate func(ctx context.Context, db *sql.DB) error
	// newStore is the store's New with the backend's options.
	newStore func(ctx context.Context, db *sql.DB) (sqlStore, error)
	// hasMigrationsTable counts the reliar_migrations tables visible: 0 or 1.
	hasMigrationsTable string
	// timeArg encodes a time as the store stores published_at.
	timeArg func(time.Time) any

	mu    sync.Mutex
	store sqlStore
}

func (b *sqlBackend) Migrate(ctx context.Context) (Migration, error) {
	from, err := b.version(ctx)
	if err != nil {
		return Migration{}, err
	}
	if err := b.migrate(ctx, b.db); err != nil {
		return Migration{}, err
	}
	to, err := b.version(ctx)
	if err != nil {
		return Migration{}, err
	}
	return Migration{From: from, To: to}, nil
}

// version reads the applied schema version, 0 when none.
func (b *sqlBackend) version(ctx context.Context) (int, error) {
	var n int
	err := b.db.QueryRowContext(ctx, b.hasMigrationsTable).Scan(&n)
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

func (b *sqlBackend) Store(ctx context.Context) (outbox.Store, error) {
	s, err := b.sqlStore(ctx)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// sqlStore makes the store once, on first use.
func (b *sqlBackend) sqlStore(ctx context.Context) (sqlStore, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.store != nil {
		return b.store, nil
	}
	s, err := b.newStore(ctx, b.db)
	if err != nil {
		return nil, err
	}
	b.store = s
	return s, nil
}

func (b *sqlBackend) CountPublished(ctx context.Context, from, to time.Time) (int64, error) {
	var n int64
	if err := b.db.QueryRowContext(ctx, "SELECT count(*) FROM outbox WHERE published_at > ? AND published_at <= ?", b.timeArg(from), b.timeArg(to)).Scan(&n); err != nil {
		return 0, fmt.Errorf("count published rows: %w", err)
	}
	return n, nil
}

func (b *sqlBackend) Begin(ctx context.Context) (Tx, error) {
	s, err := b.sqlStore(ctx)
	if err != nil {
		return nil, err
	}
	tx, err := b.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("begin: %w", err)
	}
	return &sqlTx{tx: tx, enqueue: s.Enqueue}, nil
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
