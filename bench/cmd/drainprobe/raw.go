package main

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/reliar/reliar/bench/internal/harness"
	"github.com/reliar/reliar/bench/internal/pgenv"
	"github.com/reliar/reliar/bench/internal/rawsql"
	"github.com/reliar/reliar/bench/internal/sink"
)

// rawLoop is the peer harness's pinned raw-SQL loop (bench/internal/rawsql:
// two workers, claims of 500, completion by id = ANY), opened on the run's
// schema with a delivery counter.
type rawLoop struct {
	target    harness.Target
	delivered *atomic.Int64
}

// openRaw opens the loop; opening (a pool, the idempotent migration) is not
// part of the drain.
func openRaw(ctx context.Context, env pgenv.Env) (*rawLoop, error) {
	delivered := new(atomic.Int64)
	count := func(_ context.Context, _ *sink.Sink, batch []rawsql.Claimed) error {
		delivered.Add(int64(len(batch)))
		return nil
	}
	t, err := rawsql.Pinned().Open(ctx, env, count)
	if err != nil {
		return nil, err
	}
	return &rawLoop{target: t, delivered: delivered}, nil
}

// drain starts the loop and returns how long it took until every row was
// marked published; stopping the loop is not part of it. Like the harness,
// it counts deliveries first and asks the database only once all have
// arrived.
func (r *rawLoop) drain(ctx context.Context, n int) (time.Duration, error) {
	start := time.Now()
	stop, err := r.target.Start(ctx, nil)
	if err != nil {
		return 0, err
	}
	err = waitDrained(ctx, r.target.Pending, func() bool { return r.delivered.Load() >= int64(n) })
	took := time.Since(start)
	return took, errors.Join(err, stop(ctx), r.target.Close(context.WithoutCancel(ctx)))
}

// waitDrained waits until delivered reports every message, then until
// pending reports none.
func waitDrained(ctx context.Context, pending func(context.Context) (int64, error), delivered func() bool) error {
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for !delivered() {
		select {
		case <-tick.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	for {
		left, err := pending(ctx)
		if err != nil {
			return fmt.Errorf("raw loop: %w", err)
		}
		if left == 0 {
			return nil
		}
		select {
		case <-time.After(2 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
