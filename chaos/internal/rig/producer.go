package rig

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/reliar/reliar"
)

// Event is the body of every message the suite enqueues.
type Event struct {
	Key string `json:"key,omitempty"`
	N   int    `json:"n"`
}

// MessageType implements reliar.Message.
func (Event) MessageType() string { return "chaos_event" }

// EnqueueOptions shape what Enqueue commits.
type EnqueueOptions struct {
	// PerTx is the number of messages per transaction; defaults to 10.
	PerTx int
	// Keys, when positive, gives message i the ordering key "k<i mod Keys>".
	Keys int
	// RollbackEvery, when positive, also runs and rolls back one
	// transaction of one message after every RollbackEvery commits: such a
	// message must never be published.
	RollbackEvery int
}

// Enqueue commits n messages in transactions of the run's producer.
func (r *Run) Enqueue(ctx context.Context, n int, o EnqueueOptions) error {
	if o.PerTx <= 0 {
		o.PerTx = 10
	}
	for done, tx := 0, 0; done < n; tx++ {
		k := min(o.PerTx, n-done)
		msgs := make([]reliar.Outgoing, k)
		for i := range msgs {
			msgs[i] = r.message(o.Keys)
		}
		if err := r.commit(ctx, msgs); err != nil {
			return err
		}
		done += k
		if o.RollbackEvery > 0 && tx%o.RollbackEvery == 0 {
			if err := r.rollback(ctx, r.message(o.Keys)); err != nil {
				return err
			}
		}
	}
	return nil
}

func (r *Run) message(keys int) reliar.Outgoing {
	if keys > 0 {
		r.mu.Lock()
		key := fmt.Sprintf("k%d", r.produced%keys)
		r.mu.Unlock()
		return r.keyed(key)
	}
	r.mu.Lock()
	n := r.produced
	r.produced++
	r.mu.Unlock()
	return reliar.NewMsg(Event{N: n})
}

// EnqueueTx commits msgs in one transaction; on an error nothing of it is
// committed.
func (r *Run) EnqueueTx(ctx context.Context, msgs ...reliar.Outgoing) error {
	return r.commit(ctx, msgs)
}

func (r *Run) commit(ctx context.Context, msgs []reliar.Outgoing) error {
	err := pgx.BeginFunc(ctx, r.Pool, func(tx pgx.Tx) error {
		_, err := r.store.Enqueue(ctx, tx, msgs...)
		return err
	})
	if err != nil {
		return fmt.Errorf("rig: enqueue: %w", err)
	}
	r.mu.Lock()
	for _, m := range msgs {
		r.acked = append(r.acked, m.ID)
	}
	r.mu.Unlock()
	return nil
}

func (r *Run) rollback(ctx context.Context, msg reliar.Outgoing) error {
	tx, err := r.Pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("rig: begin: %w", err)
	}
	if _, err := r.store.Enqueue(ctx, tx, msg); err != nil {
		_ = tx.Rollback(ctx)
		return fmt.Errorf("rig: enqueue: %w", err)
	}
	if err := tx.Rollback(ctx); err != nil {
		return fmt.Errorf("rig: rollback: %w", err)
	}
	return nil
}

// EnqueueRace commits two messages of one key so that the one with the
// smaller sequence commits last, hold later: the commit-order race per-key
// ordering must survive.
func (r *Run) EnqueueRace(ctx context.Context, key string, hold time.Duration) error {
	first, err := r.Pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("rig: begin: %w", err)
	}
	defer func() { _ = first.Rollback(context.WithoutCancel(ctx)) }()
	early := r.keyed(key)
	if _, err := r.store.Enqueue(ctx, first, early); err != nil {
		return fmt.Errorf("rig: enqueue: %w", err)
	}
	if err := r.commit(ctx, []reliar.Outgoing{r.keyed(key)}); err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(hold):
	}
	if err := first.Commit(ctx); err != nil {
		return fmt.Errorf("rig: commit: %w", err)
	}
	r.mu.Lock()
	r.acked = append(r.acked, early.ID)
	r.mu.Unlock()
	return nil
}

func (r *Run) keyed(key string) reliar.Outgoing {
	r.mu.Lock()
	n := r.produced
	r.produced++
	r.mu.Unlock()
	return reliar.Msg(reliar.Envelope[Event]{ID: reliar.NewMessageID(), Body: Event{Key: key, N: n}, OrderingKey: key})
}
