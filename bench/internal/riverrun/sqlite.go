package riverrun

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/reliar/reliar/bench/internal/harness"
	"github.com/reliar/reliar/bench/internal/payload"
	"github.com/reliar/reliar/bench/internal/pgenv"
	"github.com/reliar/reliar/bench/internal/quietlog"
	"github.com/reliar/reliar/bench/internal/sink"
	"github.com/reliar/reliar/bench/internal/sqliteenv"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
)

// SQLiteVariant is one configuration of River on its SQLite driver
// (riversqlite over modernc.org/sqlite, the driver River tests with).
type SQLiteVariant struct {
	// Name identifies the variant in results.
	Name string
	// FetchCooldown overrides River's default (100ms) when positive.
	FetchCooldown time.Duration
	// Conns limits the open connections of the handle the producer and
	// the workers share; 0 means sqliteenv.DefaultConns, the limit Reliar
	// runs with.
	Conns int
}

// SQLiteTuned is River on SQLite tuned as on PostgreSQL: FetchCooldown
// 1ms, the default queue at 100 workers, on a handle with Reliar's
// settings (sqliteenv).
func SQLiteTuned() SQLiteVariant {
	return SQLiteVariant{Name: "river sqlite tuned", FetchCooldown: time.Millisecond}
}

// SQLiteTunedOneConn is SQLiteTuned on a handle of one connection, as
// River's documentation advises for SQLite.
func SQLiteTunedOneConn() SQLiteVariant {
	v := SQLiteTuned()
	v.Name, v.Conns = "river sqlite tuned 1 conn", 1
	return v
}

// System returns the harness system of v.
func (v SQLiteVariant) System() harness.System {
	return harness.System{Name: v.Name, Open: v.open, OnFile: true}
}

// config is the client configuration of v; with workers, the default queue
// runs maxWorkers of them. SQLite has one schema, "main", River's default.
func (v SQLiteVariant) config(workers *river.Workers) *river.Config {
	return Variant{FetchCooldown: v.FetchCooldown}.config("", workers)
}

func (v SQLiteVariant) open(ctx context.Context, env pgenv.Env) (harness.Target, error) {
	db, err := sqliteenv.Open(ctx, env.Dir, v.Conns, false)
	if err != nil {
		return nil, err
	}
	driver := riversqlite.New(db)
	migrator, err := rivermigrate.New(driver, &rivermigrate.Config{Logger: quietlog.New()})
	if err == nil {
		_, err = migrator.Migrate(ctx, rivermigrate.DirectionUp, nil)
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("riverrun: migrate: %w", err)
	}
	// An insert-only client, as on PostgreSQL: its inserts also send the
	// (rate-limited) insert notifications the workers' client listens for.
	producer, err := river.NewClient(driver, v.config(nil))
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("riverrun: producer client: %w", err)
	}
	return &sqliteTarget{v: v, db: db, producer: producer}, nil
}

// sqliteTarget is River on one run's SQLite file.
type sqliteTarget struct {
	v        SQLiteVariant
	db       *sql.DB
	producer *river.Client[*sql.Tx]
}

func (t *sqliteTarget) Enqueue(ctx context.Context, docs []payload.Doc) error {
	tx, err := t.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("riverrun: begin: %w", err)
	}
	if len(docs) == 1 {
		_, err = t.producer.InsertTx(ctx, tx, Args(docs[0]), nil)
	} else {
		params := make([]river.InsertManyParams, len(docs))
		for i, d := range docs {
			params[i] = river.InsertManyParams{Args: Args(d)}
		}
		_, err = t.producer.InsertManyTx(ctx, tx, params)
	}
	if err != nil {
		return errors.Join(fmt.Errorf("riverrun: insert: %w", err), tx.Rollback())
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("riverrun: commit: %w", err)
	}
	return nil
}

func (t *sqliteTarget) Start(ctx context.Context, s *sink.Sink) (func(context.Context) error, error) {
	workers := river.NewWorkers()
	river.AddWorker(workers, &worker{sink: s})
	client, err := river.NewClient(riversqlite.New(t.db), t.v.config(workers))
	if err != nil {
		return nil, fmt.Errorf("riverrun: client: %w", err)
	}
	if err := client.Start(context.WithoutCancel(ctx)); err != nil {
		return nil, fmt.Errorf("riverrun: start: %w", err)
	}
	return func(ctx context.Context) error {
		if err := client.Stop(ctx); err != nil {
			return fmt.Errorf("riverrun: stop: %w", err)
		}
		return nil
	}, nil
}

func (t *sqliteTarget) Pending(ctx context.Context) (int64, error) {
	var n int64
	err := t.db.QueryRowContext(ctx, `SELECT count(*) FROM river_job WHERE state <> 'completed'`).Scan(&n)
	return n, err
}

func (t *sqliteTarget) Close(context.Context) error { return t.db.Close() }
