package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/pprof"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/bench/internal/payload"
	"github.com/reliar/reliar/bench/internal/pgenv"
	"github.com/reliar/reliar/bench/internal/quietlog"
	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/store/pgstore"
)

// message is the benchmark document as a Reliar message body.
type message payload.Doc

// MessageType implements reliar.Message.
func (message) MessageType() string { return "bench.message" }

func run(ctx context.Context, args []string, out io.Writer) error {
	c, err := parse(args, out)
	if err != nil {
		return err
	}
	env, drop, err := pgenv.Fresh(ctx, c.dsn, "drainprobe")
	if err != nil {
		return err
	}
	defer drop(context.WithoutCancel(ctx))
	pool, err := env.Pool(ctx, 0)
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := pgstore.Migrate(ctx, pool, pgstore.WithSchema(env.Schema)); err != nil {
		return err
	}
	store, err := pgstore.New(ctx, pool, pgstore.WithSchema(env.Schema), pgstore.WithLogger(quietlog.AtLevel(slog.LevelError)))
	if err != nil {
		return err
	}
	if err := fill(ctx, pool, store, c.messages); err != nil {
		return err
	}
	if c.cpuProfile != "" {
		f, err := os.Create(c.cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	var raw *rawLoop
	if c.raw {
		if raw, err = openRaw(ctx, env); err != nil {
			return err
		}
	}
	before, err := sample()
	if err != nil {
		return err
	}
	var drain time.Duration
	var timed *timedStore
	if raw != nil {
		drain, err = raw.drain(ctx, c.messages)
	} else if timed, err = drainReliar(ctx, store, c); err == nil {
		drain = timed.end.Sub(timed.start)
	}
	if err != nil {
		return err
	}
	after, err := sample()
	if err != nil {
		return err
	}
	hot, all, err := updates(ctx, pool)
	if err != nil {
		return err
	}
	report(out, c, drain, before, after, hot, all, timed)
	return nil
}

// fill enqueues n messages, 100 per transaction, then vacuums and analyzes
// the table so that every run starts from the same state.
func fill(ctx context.Context, pool *pgxpool.Pool, store *pgstore.Store, n int) error {
	msgs := make([]reliar.Outgoing, 100)
	for i := 0; i < n; i += len(msgs) {
		for j := range msgs {
			msgs[j] = reliar.NewMsg(message(payload.New(i+j, time.Now().UnixNano())))
		}
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			_, err := store.Enqueue(ctx, tx, msgs...)
			return err
		})
		if err != nil {
			return fmt.Errorf("fill: %w", err)
		}
	}
	if _, err := pool.Exec(ctx, "VACUUM ANALYZE outbox"); err != nil {
		return fmt.Errorf("fill: vacuum: %w", err)
	}
	return nil
}

// drainReliar runs one dispatcher until every message is published and
// completed, and returns the timed store.
func drainReliar(ctx context.Context, store *pgstore.Store, c config) (*timedStore, error) {
	settings := outbox.DefaultSettings()
	if c.batch > 0 {
		settings.BatchSize = c.batch
	}
	if c.maxInFlight > 0 {
		settings.MaxInFlight = c.maxInFlight
	}
	var published atomic.Int64
	timed := &timedStore{Store: store, start: time.Now()}
	d, err := outbox.New(timed, countingPublisher{&published}, settings, outbox.WithLogger(quietlog.New()))
	if err != nil {
		return nil, err
	}
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- d.Run(rctx) }()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for published.Load() < int64(c.messages) || timed.completed() < int64(c.messages) {
		select {
		case <-tick.C:
		case err := <-done:
			cancel()
			return nil, fmt.Errorf("dispatcher stopped early: %v", err)
		case <-ctx.Done():
			cancel()
			<-done
			return nil, ctx.Err()
		}
	}
	timed.finish()
	cancel()
	return timed, <-done
}

// countingPublisher counts and drops every message.
type countingPublisher struct{ n *atomic.Int64 }

func (p countingPublisher) Publish(context.Context, *reliar.SerializedEnvelope) error {
	p.n.Add(1)
	return nil
}
