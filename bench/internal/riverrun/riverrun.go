// Package riverrun sets River up for the benchmark: its migrations on the
// run's schema, a client with a worker that hands every job to the sink, and
// InsertManyTx as the producer.
package riverrun

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/reliar/reliar/bench/internal/harness"
	"github.com/reliar/reliar/bench/internal/payload"
	"github.com/reliar/reliar/bench/internal/pgenv"
	"github.com/reliar/reliar/bench/internal/quietlog"
	"github.com/reliar/reliar/bench/internal/sink"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

// Args is the benchmark document as River job arguments.
type Args payload.Doc

// Kind implements river.JobArgs.
func (Args) Kind() string { return "bench_message" }

// worker hands every job to the sink and succeeds.
type worker struct {
	river.WorkerDefaults[Args]
	sink *sink.Sink
}

// Work records the job's arrival; a document the sink cannot read cancels
// the job rather than retrying it.
func (w *worker) Work(_ context.Context, job *river.Job[Args]) error {
	if err := w.sink.DeliverDoc(payload.Doc(job.Args)); err != nil {
		return river.JobCancel(err)
	}
	return nil
}

// Variant is one configuration of River under test.
type Variant struct {
	// Name identifies the variant in results.
	Name string
	// FetchCooldown overrides River's default (100ms) when positive.
	FetchCooldown time.Duration
}

// Defaults is River's default client configuration with the default queue
// at 100 workers, as in River's documentation.
func Defaults() Variant { return Variant{Name: "river defaults"} }

// Tuned is Defaults with FetchCooldown 1ms.
func Tuned() Variant { return Variant{Name: "river tuned", FetchCooldown: time.Millisecond} }

// maxWorkers is the default queue's worker count.
const maxWorkers = 100

// System returns the harness system of v.
func (v Variant) System() harness.System { return harness.System{Name: v.Name, Open: v.open} }

// config is the client configuration of v; with workers, the default queue
// runs maxWorkers of them.
func (v Variant) config(schema string, workers *river.Workers) *river.Config {
	c := &river.Config{Schema: schema, Logger: quietlog.New(), FetchCooldown: v.FetchCooldown}
	if workers != nil {
		c.Queues = map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: maxWorkers}}
		c.Workers = workers
	}
	return c
}

func (v Variant) open(ctx context.Context, env pgenv.Env) (harness.Target, error) {
	pool, err := env.Pool(ctx, 0)
	if err != nil {
		return nil, err
	}
	driver := riverpgxv5.New(pool)
	migrator, err := rivermigrate.New(driver, &rivermigrate.Config{Schema: env.Schema, Logger: quietlog.New()})
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("riverrun: migrator: %w", err)
	}
	if _, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		pool.Close()
		return nil, fmt.Errorf("riverrun: migrate: %w", err)
	}
	t := &target{pool: pool, schema: env.Schema, v: v}
	// An insert-only client with the same settings: it preloads without
	// working anything. Its FetchCooldown matters: it also rate-limits the
	// insert notifications it sends.
	t.producer, err = river.NewClient(driver, v.config(env.Schema, nil))
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("riverrun: producer client: %w", err)
	}
	return t, nil
}

// target is River on one run's schema.
type target struct {
	v        Variant
	pool     *pgxpool.Pool
	schema   string
	producer *river.Client[pgx.Tx]
}

func (t *target) Enqueue(ctx context.Context, docs []payload.Doc) error {
	tx, err := t.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("riverrun: begin: %w", err)
	}
	// One job goes in with InsertTx, as a user inserts one; a batch with
	// InsertManyTx.
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
		return errors.Join(fmt.Errorf("riverrun: insert: %w", err), tx.Rollback(ctx))
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("riverrun: commit: %w", err)
	}
	return nil
}

func (t *target) Start(ctx context.Context, s *sink.Sink) (func(context.Context) error, error) {
	workers := river.NewWorkers()
	river.AddWorker(workers, &worker{sink: s})
	client, err := river.NewClient(riverpgxv5.New(t.pool), t.v.config(t.schema, workers))
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

func (t *target) Pending(ctx context.Context) (int64, error) {
	var n int64
	err := t.pool.QueryRow(ctx, `SELECT count(*) FROM `+pgx.Identifier{t.schema, "river_job"}.Sanitize()+
		` WHERE state <> 'completed'`).Scan(&n)
	return n, err
}

func (t *target) Close(context.Context) error {
	t.pool.Close()
	return nil
}
