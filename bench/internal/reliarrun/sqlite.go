package reliarrun

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/bench/internal/harness"
	"github.com/reliar/reliar/bench/internal/payload"
	"github.com/reliar/reliar/bench/internal/pgenv"
	"github.com/reliar/reliar/bench/internal/quietlog"
	"github.com/reliar/reliar/bench/internal/sink"
	"github.com/reliar/reliar/bench/internal/sqliteenv"
	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/store/sqlitestore"
)

// SQLiteVariant is one configuration of Reliar on store/sqlitestore, the
// embedded default.
type SQLiteVariant struct {
	// Name identifies the variant in results.
	Name string
	// Conns limits the open connections of the handle the application
	// and the store share; 0 means sqliteenv.DefaultConns.
	Conns int
	// Batch gives the dispatcher a reliar.BatchPublisher.
	Batch bool
	// Tune changes the default settings; nil keeps them.
	Tune func(*outbox.Settings)
	// WakeupInterval is the store's wake-up watcher interval; 0 keeps
	// sqlitestore.DefaultWakeupInterval.
	WakeupInterval time.Duration
	// AsyncCommit opens the store with sqlitestore.WithAsyncCommit.
	AsyncCommit bool
}

// SQLite is Reliar on SQLite at outbox.DefaultSettings with a plain
// Publisher, as "reliar defaults" on PostgreSQL.
func SQLite() SQLiteVariant { return SQLiteVariant{Name: "reliar sqlite"} }

// SQLiteDemo is Reliar on SQLite with the dispatcher settings `reliar demo`
// uses (cmd/reliar's demo.Settings when this was written: BatchSize and
// MaxInFlight 512, the default poll intervals, no table gauges), a
// BatchPublisher, as the demo's NATS publisher is, the demo's
// connections (one per producer, 8, and 8 for the dispatcher) and its
// store option, sqlitestore.WithAsyncCommit.
func SQLiteDemo() SQLiteVariant {
	return SQLiteVariant{Name: "reliar sqlite demo settings", Conns: DemoConns, Batch: true, Tune: demoSettings, AsyncCommit: true}
}

// SQLiteDemoSyncCommit is SQLiteDemo without sqlitestore.WithAsyncCommit:
// every claim and outcome write waits for the disk, as the demo's did
// before.
func SQLiteDemoSyncCommit() SQLiteVariant {
	v := SQLiteDemo()
	v.Name, v.AsyncCommit = "reliar sqlite demo settings sync commit", false
	return v
}

// DemoConns is the connections `reliar demo` opens on SQLite: one per
// producer (8 by default) and 8 for the dispatcher.
const DemoConns = 16

func demoSettings(s *outbox.Settings) {
	s.BatchSize, s.MaxInFlight = 512, 512
	s.StatsInterval = outbox.Off
}

// SQLiteDemoTwoConns is SQLiteDemo on the two connections the demo used
// before it gave every writer its own, for comparison.
func SQLiteDemoTwoConns() SQLiteVariant {
	v := SQLiteDemo()
	v.Name, v.Conns = "reliar sqlite demo settings 2 conns", 2
	return v
}

// SQLiteDemoPoll5ms is SQLiteDemo with the poll intervals the demo had
// before (PollInterval 5 ms, IdlePollInterval 20 ms), for comparison: every
// claim and outcome write on SQLite is a commit that waits for the disk.
func SQLiteDemoPoll5ms() SQLiteVariant {
	return SQLiteVariant{Name: "reliar sqlite demo settings poll 5ms", Conns: DemoConns, Batch: true, Tune: func(s *outbox.Settings) {
		demoSettings(s)
		s.PollInterval, s.IdlePollInterval = 5*time.Millisecond, 20*time.Millisecond
	}}
}

// SQLiteDemoWake20ms is SQLiteDemo with the store's wake-up watcher looking
// every 20 ms instead of 10: half the claims while producers commit, for
// a longer wait before each.
func SQLiteDemoWake20ms() SQLiteVariant {
	v := SQLiteDemo()
	v.Name, v.WakeupInterval = "reliar sqlite demo settings wake 20ms", 20*time.Millisecond
	return v
}

// SQLiteOneConn is SQLite on a handle of one connection, the limit River
// advises for its SQLite driver: every writer queues in Go, none in
// SQLite's busy handler.
func SQLiteOneConn() SQLiteVariant { return SQLiteVariant{Name: "reliar sqlite 1 conn", Conns: 1} }

// System returns the harness system of v.
func (v SQLiteVariant) System() harness.System {
	return harness.System{Name: v.Name, Open: v.open, OnFile: true}
}

func (v SQLiteVariant) open(ctx context.Context, env pgenv.Env) (harness.Target, error) {
	db, err := sqliteenv.Open(ctx, env.Dir, v.Conns, true)
	if err != nil {
		return nil, err
	}
	if err := sqlitestore.Migrate(ctx, db); err != nil {
		db.Close()
		return nil, fmt.Errorf("reliarrun: migrate: %w", err)
	}
	opts := []sqlitestore.Option{sqlitestore.WithLogger(quietlog.AtLevel(slog.LevelError))}
	if v.WakeupInterval > 0 {
		opts = append(opts, sqlitestore.WithWakeupInterval(v.WakeupInterval))
	}
	if v.AsyncCommit {
		opts = append(opts, sqlitestore.WithAsyncCommit())
	}
	store, err := sqlitestore.New(ctx, db, opts...)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("reliarrun: new store: %w", err)
	}
	return &sqliteTarget{v: v, db: db, store: store}, nil
}

// sqliteTarget is Reliar on one run's SQLite file.
type sqliteTarget struct {
	v     SQLiteVariant
	db    *sql.DB
	store *sqlitestore.Store
}

func (t *sqliteTarget) Enqueue(ctx context.Context, docs []payload.Doc) error {
	msgs := make([]reliar.Outgoing, len(docs))
	for i, d := range docs {
		msgs[i] = reliar.NewMsg(Message(d))
	}
	tx, err := t.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("reliarrun: begin: %w", err)
	}
	if _, err := t.store.Enqueue(ctx, tx, msgs...); err != nil {
		return errors.Join(fmt.Errorf("reliarrun: enqueue: %w", err), tx.Rollback())
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("reliarrun: commit: %w", err)
	}
	return nil
}

func (t *sqliteTarget) Start(ctx context.Context, s *sink.Sink) (func(context.Context) error, error) {
	settings := outbox.DefaultSettings()
	if t.v.Tune != nil {
		t.v.Tune(&settings)
	}
	var pub reliar.Publisher = Publisher{Sink: s}
	if t.v.Batch {
		pub = BatchPublisher{Publisher{Sink: s}}
	}
	return startDispatchers(ctx, t.store, pub, settings, 1)
}

func (t *sqliteTarget) Pending(ctx context.Context) (int64, error) {
	var n int64
	err := t.db.QueryRowContext(ctx, `SELECT count(*) FROM outbox WHERE published_at IS NULL AND dead_at IS NULL`).Scan(&n)
	return n, err
}

func (t *sqliteTarget) Close(context.Context) error { return t.db.Close() }
