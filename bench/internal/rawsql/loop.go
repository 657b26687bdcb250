package rawsql

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/reliar/reliar/bench/internal/sink"
)

// Start runs the loop's goroutines until the returned stop is called.
func (t *target) Start(ctx context.Context, s *sink.Sink) (func(context.Context) error, error) {
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	var errs []error
	if t.loop.Pipelined {
		errs = make([]error, 2)
		batches := make(chan []uuid.UUID, 1)
		wg.Go(func() { errs[0] = t.claimer(rctx, s, batches) })
		wg.Go(func() { errs[1] = t.completer(rctx, batches) })
	} else {
		errs = make([]error, t.loop.conns())
		for i := range errs {
			wg.Go(func() { errs[i] = t.work(rctx, "raw-"+strconv.Itoa(i), s) })
		}
	}
	return func(context.Context) error {
		cancel()
		wg.Wait()
		return errors.Join(errs...)
	}, nil
}

// work claims, delivers and completes until ctx is cancelled.
func (t *target) work(ctx context.Context, worker string, s *sink.Sink) error {
	batch := make([]Claimed, 0, ClaimSize)
	ids := make([]uuid.UUID, 0, ClaimSize)
	for {
		var err error
		batch, err = t.claim(ctx, worker, batch[:0])
		if err == nil && len(batch) > 0 {
			err = t.deliver(ctx, s, batch)
		}
		if err == nil && len(batch) > 0 {
			ids = ids[:0]
			for _, c := range batch {
				ids = append(ids, c.ID)
			}
			_, err = t.pool.Exec(ctx, t.q.complete, ids)
		}
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return fmt.Errorf("rawsql: %s: %w", worker, err)
		}
		if len(batch) == 0 && !idle(ctx) {
			return nil
		}
	}
}

// claimer claims and delivers, handing the ids of every delivered batch to
// the completer and claiming the next batch at once. It closes batches when
// it returns.
func (t *target) claimer(ctx context.Context, s *sink.Sink, batches chan<- []uuid.UUID) error {
	defer close(batches)
	batch := make([]Claimed, 0, ClaimSize)
	for {
		var err error
		batch, err = t.claim(ctx, "raw-claimer", batch[:0])
		if err == nil && len(batch) > 0 {
			err = t.deliver(ctx, s, batch)
		}
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return fmt.Errorf("rawsql: claimer: %w", err)
		}
		if len(batch) == 0 {
			if !idle(ctx) {
				return nil
			}
			continue
		}
		ids := make([]uuid.UUID, len(batch))
		for i, c := range batch {
			ids[i] = c.ID
		}
		select {
		case batches <- ids:
		case <-ctx.Done():
			return nil
		}
	}
}

// completer marks every batch it is handed published, until batches is
// closed.
func (t *target) completer(ctx context.Context, batches <-chan []uuid.UUID) error {
	for ids := range batches {
		if _, err := t.pool.Exec(ctx, t.q.complete, ids); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("rawsql: completer: %w", err)
		}
	}
	return nil
}

// claim runs the claim statement and appends its rows to batch.
func (t *target) claim(ctx context.Context, worker string, batch []Claimed) ([]Claimed, error) {
	var args []any
	if t.q.worker {
		args = append(args, worker)
	}
	rows, err := t.pool.Query(ctx, t.q.claim, args...)
	if err != nil {
		return batch, err
	}
	var c Claimed
	dest := []any{&c.ID, &c.Payload}
	if t.q.envelope {
		dest = append(dest, &c.Type, &c.Sequence, &c.CreatedAt, &c.ContentType, &c.Version, &c.ConversationID)
	}
	_, err = pgx.ForEachRow(rows, dest, func() error {
		batch = append(batch, c)
		return nil
	})
	return batch, err
}

// idle waits IdleWait after an empty claim; false means ctx ended.
func idle(ctx context.Context) bool {
	select {
	case <-time.After(IdleWait):
		return true
	case <-ctx.Done():
		return false
	}
}
