package pgstore

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5"
)

// Reconnect backoff of the listener.
const (
	listenBackoffMin = 100 * time.Millisecond
	listenBackoffMax = 5 * time.Second
	closeTimeout     = 2 * time.Second
)

// Wakeups returns a channel that receives a value after enqueues commit
// (and after the listener reconnects, since notifications may have been
// missed meanwhile). Signals are coalesced: the channel has a capacity of
// one.
//
// Every Wakeups call of one Store shares one listener: one dedicated
// connection taken out of the pool (it no longer counts toward the pool's
// size), LISTENing on the table's channel and fanning each notification out
// to every subscriber's channel. The first call opens it, and fails when its
// LISTEN fails; the connection goes when the last subscriber's ctx is done,
// and the next call opens a new one. It reconnects with backoff when it is
// lost. Each subscriber's channel is closed, as the last act of the work
// done for it, once its ctx is done and — for the last subscriber — the
// listener has stopped, so reading until the channel is closed waits for
// it. LISTEN does not work through PgBouncer in transaction pooling mode:
// use WithoutNotify there.
func (s *Store) Wakeups(ctx context.Context) (<-chan struct{}, error) {
	if s.pooled {
		return nil, ErrListenPooled
	}
	if err := ctx.Err(); err != nil {
		return nil, wrapErr("listen", err)
	}
	return s.wake.Subscribe(ctx, s.startListener)
}

// startListener opens the listener's connection and runs the listener in a
// goroutine until run ends; done is closed once it returned.
func (s *Store) startListener(ctx, run context.Context, wake func()) (<-chan struct{}, error) {
	conn, err := s.listen(ctx)
	if err != nil {
		return nil, err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.runListener(run, conn, func(payload string) {
			// A notification naming an enqueue of the zero-claim path hands
			// its rows over; no claim would find them.
			if !s.ho.Take(payload) {
				wake()
			}
		})
	}()
	return done, nil
}

// listen takes a connection out of the pool and LISTENs on it.
func (s *Store) listen(ctx context.Context) (*pgx.Conn, error) {
	pc, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, wrapErr("listen", err)
	}
	conn := pc.Hijack()
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{s.n.channel}.Sanitize()); err != nil {
		closeConn(conn)
		return nil, wrapErr("listen", err)
	}
	return conn, nil
}

// runListener calls note with the payload of every notification, and with
// "" after every reconnection, until ctx ends.
func (s *Store) runListener(ctx context.Context, conn *pgx.Conn, note func(payload string)) {
	backoff := listenBackoffMin
	for {
		err := forward(ctx, conn, note)
		closeConn(conn)
		if ctx.Err() != nil {
			return
		}
		s.log.WarnContext(ctx, "pgstore: notification listener lost its connection; reconnecting", slog.Any("error", err))
		for conn = nil; conn == nil; {
			wait := backoff/2 + rand.N(backoff/2+1)
			backoff = min(backoff*2, listenBackoffMax)
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
			if conn, err = s.listen(ctx); err != nil {
				if ctx.Err() != nil {
					return
				}
				s.log.WarnContext(ctx, "pgstore: notification listener cannot reconnect", slog.Any("error", err))
			}
		}
		backoff = listenBackoffMin
		note("")
	}
}

// forward calls note with each notification's payload until the
// connection fails or ctx ends.
func forward(ctx context.Context, conn *pgx.Conn, note func(payload string)) error {
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		note(n.Payload)
	}
}

// closeConn closes a dedicated connection, bounded in time.
func closeConn(conn *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	_ = conn.Close(ctx)
}
