package storeurl

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/cmd/reliar/internal/logging"
	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/store/pgstore"
)

// Connection defaults for URLs that do not set them.
const (
	// pgConnectTimeout bounds each connection attempt (connect_timeout).
	pgConnectTimeout = 10 * time.Second
	// pgMaxConns sizes the pool (pool_max_conns): the demo's producers,
	// the dispatcher's claims, outcome writes and lease renewals, and the
	// LISTEN connection.
	pgMaxConns = 16
)

// postgresDriver opens pgstore over a pgxpool built from the URL.
type postgresDriver struct{}

func (postgresDriver) name() string      { return "postgres" }
func (postgresDriver) schemes() []string { return []string{"postgres", "postgresql"} }

func (postgresDriver) validate(_ *url.URL, raw string) error {
	_, err := pgConfig(raw)
	return err
}

// pgConfig parses raw into a pool configuration with the CLI's defaults.
func pgConfig(raw string) (*pgxpool.Config, error) {
	cfg, err := pgxpool.ParseConfig(raw)
	if err != nil {
		return nil, badURL(raw, "%v", errors.Unwrap(err))
	}
	u, _ := url.Parse(raw)
	if u.Query().Get("connect_timeout") == "" {
		cfg.ConnConfig.ConnectTimeout = pgConnectTimeout
	}
	if u.Query().Get("pool_max_conns") == "" {
		cfg.MaxConns = pgMaxConns
	}
	return cfg, nil
}

func (postgresDriver) open(ctx context.Context, l Location, opts Options, scratch bool) (Backend, error) {
	cfg, err := pgConfig(l.raw)
	if err != nil {
		return nil, err
	}
	if opts.MaxConns > 0 {
		cfg.MaxConns = int32(min(opts.MaxConns, 1<<30))
	}
	schema := opts.Schema
	switch {
	case scratch:
		schema = "reliar_demo_" + randomHex(4)
	case schema == "":
		schema = pgstore.DefaultSchema
	}
	if err := pgstore.ValidateSchema(schema); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadOption, err)
	}
	pool, err := pgConnect(ctx, l, cfg)
	if err != nil {
		return nil, err
	}
	b := &pgBackend{pool: pool, schema: schema, scratch: scratch, opts: opts,
		where: fmt.Sprintf("%s:%d/%s", cfg.ConnConfig.Host, cfg.ConnConfig.Port, cfg.ConnConfig.Database)}
	if scratch {
		// Claim the schema: a name that already exists is not ours to drop.
		if _, err := pool.Exec(ctx, "CREATE SCHEMA "+b.quote()); err != nil {
			pool.Close()
			return nil, fmt.Errorf("create scratch schema %s: %w", schema, err)
		}
	}
	return b, nil
}

// pgConnect opens the pool. A URL that names no default_query_exec_mode
// gets pgx's default (named prepared statements) on a direct connection
// and cache_describe through a pooler such as PgBouncer in transaction
// mode, where named prepared statements fail (pgstore.BehindPooler).
func pgConnect(ctx context.Context, l Location, cfg *pgxpool.Config) (*pgxpool.Pool, error) {
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, &ConnectError{Where: l.String(), Err: err}
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, &ConnectError{Where: l.String(), Err: err}
	}
	u, _ := url.Parse(l.raw)
	if u == nil || u.Query().Get("default_query_exec_mode") != "" {
		return pool, nil
	}
	pooled, err := pgstore.BehindPooler(ctx, pool)
	if err != nil {
		pool.Close()
		return nil, &ConnectError{Where: l.String(), Err: err}
	}
	if !pooled {
		return pool, nil
	}
	pool.Close()
	cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeCacheDescribe
	if pool, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
		return nil, &ConnectError{Where: l.String(), Err: err}
	}
	return pool, nil
}

func (postgresDriver) poolSize(l Location) int {
	cfg, err := pgConfig(l.raw)
	if err != nil {
		return pgMaxConns
	}
	return int(cfg.MaxConns)
}

func (postgresDriver) listenerConns() int { return 1 }

func (postgresDriver) migrationSQL(opts Options) ([]SQLFile, error) {
	schema := opts.Schema
	if schema == "" {
		schema = pgstore.DefaultSchema
	}
	fsys, err := pgstore.Migrations(pgstore.WithSchema(schema))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadOption, err)
	}
	files, err := upFiles(fsys)
	if err != nil {
		return nil, err
	}
	if schema != pgstore.DefaultSchema {
		// pgstore.Migrate creates the schema before the first migration.
		create := SQLFile{Name: "schema", SQL: "CREATE SCHEMA IF NOT EXISTS " + pgx.Identifier{schema}.Sanitize() + ";\n"}
		files = append([]SQLFile{create}, files...)
	}
	return files, nil
}

// upFiles reads the *.up.sql files of fsys in name (version) order.
func upFiles(fsys fs.FS) ([]SQLFile, error) {
	names, err := fs.Glob(fsys, "*.up.sql")
	if err != nil {
		return nil, fmt.Errorf("list migrations: %w", err)
	}
	sort.Strings(names)
	out := make([]SQLFile, 0, len(names))
	for _, n := range names {
		b, err := fs.ReadFile(fsys, n)
		if err != nil {
			return nil, fmt.Errorf("read migration %s: %w", n, err)
		}
		out = append(out, SQLFile{Name: n, SQL: string(b)})
	}
	return out, nil
}

// randomHex returns n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// pgBackend is a PostgreSQL database with the outbox in one schema.
type pgBackend struct {
	pool    *pgxpool.Pool
	schema  string
	scratch bool
	opts    Options
	where   string

	mu    sync.Mutex
	store *pgstore.Store
}

func (b *pgBackend) quote() string { return pgx.Identifier{b.schema}.Sanitize() }

func (b *pgBackend) Describe() string {
	return fmt.Sprintf("postgres %s schema %q", b.where, b.schema)
}

func (b *pgBackend) Migrate(ctx context.Context) (Migration, error) {
	from, err := b.version(ctx)
	if err != nil {
		return Migration{}, err
	}
	if err := pgstore.Migrate(ctx, b.pool, pgstore.WithSchema(b.schema)); err != nil {
		return Migration{}, err
	}
	to, err := b.version(ctx)
	if err != nil {
		return Migration{}, err
	}
	return Migration{From: from, To: to}, nil
}

// version reads the applied schema version, 0 when none.
func (b *pgBackend) version(ctx context.Context) (int, error) {
	table := pgx.Identifier{b.schema, "reliar_migrations"}.Sanitize()
	var exists bool
	if err := b.pool.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", table).Scan(&exists); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	if !exists {
		return 0, nil
	}
	var v int
	if err := b.pool.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM "+table).Scan(&v); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	return v, nil
}

func (b *pgBackend) Store(ctx context.Context) (outbox.Store, error) {
	s, err := b.pgStore(ctx)
	if err != nil {
		return nil, err
	}
	return s, nil
}

func (b *pgBackend) pgStore(ctx context.Context) (*pgstore.Store, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.store != nil {
		return b.store, nil
	}
	log := b.opts.logger()
	if b.scratch {
		// The store warns at start-up about outbox tables in other schemas,
		// which a fresh scratch schema always meets in a shared database.
		log = logging.Floor(log, slog.LevelError)
	}
	opts := []pgstore.Option{pgstore.WithSchema(b.schema), pgstore.WithLogger(log)}
	if b.opts.AsyncCommit {
		opts = append(opts, pgstore.WithAsyncCommit())
	}
	s, err := pgstore.New(ctx, b.pool, opts...)
	if err != nil {
		return nil, err
	}
	b.store = s
	return s, nil
}

func (b *pgBackend) CountPublished(ctx context.Context, from, to time.Time) (int64, error) {
	var n int64
	if err := b.pool.QueryRow(ctx, "SELECT count(*) FROM "+b.quote()+".outbox WHERE published_at > $1 AND published_at <= $2", from, to).Scan(&n); err != nil {
		return 0, fmt.Errorf("count published rows: %w", err)
	}
	return n, nil
}

// CheckWritable reports whether the store can take the relay's claims and
// outcome writes (pgstore.Store.CheckWritable): the server is not a
// standby nor read-only by default, and the role has the privileges.
func (b *pgBackend) CheckWritable(ctx context.Context) error {
	s, err := b.pgStore(ctx)
	if err != nil {
		return err
	}
	return s.CheckWritable(ctx)
}

func (b *pgBackend) Begin(ctx context.Context) (Tx, error) {
	s, err := b.pgStore(ctx)
	if err != nil {
		return nil, err
	}
	tx, err := b.pool.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("begin: %w", err)
	}
	return &pgTx{tx: tx, store: s}, nil
}

func (b *pgBackend) Dialect() Dialect {
	return Dialect{
		Bind:  func(n int) string { return "$" + strconv.Itoa(n) },
		Table: func(name string) string { return pgx.Identifier{b.schema, name}.Sanitize() },
	}
}

func (b *pgBackend) Close(ctx context.Context) error {
	defer b.pool.Close()
	if !b.scratch {
		return nil
	}
	if _, err := b.pool.Exec(ctx, "DROP SCHEMA IF EXISTS "+b.quote()+" CASCADE"); err != nil {
		return fmt.Errorf("drop scratch schema %s: %w", b.schema, err)
	}
	return nil
}

// pgTx is a pgx transaction and the store that enqueues into it.
type pgTx struct {
	tx    pgx.Tx
	store *pgstore.Store
}

func (t *pgTx) Exec(ctx context.Context, sql string, args ...any) error {
	_, err := t.tx.Exec(ctx, sql, args...)
	return err
}

func (t *pgTx) Enqueue(ctx context.Context, msgs ...reliar.Outgoing) ([]reliar.MessageID, error) {
	return t.store.Enqueue(ctx, t.tx, msgs...)
}

func (t *pgTx) Commit(ctx context.Context) error { return t.tx.Commit(ctx) }

func (t *pgTx) Rollback(ctx context.Context) error {
	if err := t.tx.Rollback(ctx); err != nil && !errors.Is(err, pgx.ErrTxClosed) {
		return err
	}
	return nil
}
