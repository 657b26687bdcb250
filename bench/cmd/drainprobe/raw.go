package main

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/reliar/reliar/bench/internal/pgenv"
	"github.com/reliar/reliar/bench/internal/rawsql"
	"github.com/reliar/reliar/bench/internal/sink"
)

// drainRaw drains the rows with the peer harness's pinned raw-SQL loop
// (bench/internal/rawsql: two workers, claims of 500, completion by
// id = ANY) and returns once every row is marked published. Like the
// harness, it counts deliveries first and asks the database only once all
// have arrived.
func drainRaw(ctx context.Context, env pgenv.Env, n int) error {
	var delivered atomic.Int64
	count := func(_ context.Context, _ *sink.Sink, batch []rawsql.Claimed) error {
		delivered.Add(int64(len(batch)))
		return nil
	}
	t, err := rawsql.Open(ctx, env, count)
	if err != nil {
		return err
	}
	defer t.Close(context.WithoutCancel(ctx))
	stop, err := t.Start(ctx, nil)
	if err != nil {
		return err
	}
	err = waitDrained(ctx, t.Pending, func() bool { return delivered.Load() >= int64(n) })
	return errors.Join(err, stop(ctx))
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
