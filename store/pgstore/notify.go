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

// Wakeups listens on the table's notification channel and returns a channel
// that receives a value after enqueues commit (and after the listener
// reconnects, since notifications may have been missed meanwhile). Signals
// are coalesced: the channel has a capacity of one.
//
// The listener holds a dedicated connection taken out of the pool (it no
// longer counts toward the pool's size) and reconnects with backoff when it
// is lost. One goroutine does the work; it closes the returned channel as its
// last act once ctx is done, so reading until the channel is closed waits for
// it. Wakeups fails when the first LISTEN fails. LISTEN does not work through
// PgBouncer in transaction pooling mode: use WithoutNotify there.
func (s *Store) Wakeups(ctx context.Context) (<-chan struct{}, error) {
	conn, err := s.listen(ctx)
	if err != nil {
		return nil, err
	}
	out := make(chan struct{}, 1)
	go s.runListener(ctx, conn, out)
	return out, nil
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

// runListener forwards notifications to out and reconnects until ctx ends,
// then closes out.
func (s *Store) runListener(ctx context.Context, conn *pgx.Conn, out chan<- struct{}) {
	defer close(out)
	backoff := listenBackoffMin
	for {
		err := forward(ctx, conn, out)
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
		signal(out)
	}
}

// forward relays notifications until the connection fails or ctx ends.
func forward(ctx context.Context, conn *pgx.Conn, out chan<- struct{}) error {
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			return err
		}
		signal(out)
	}
}

// signal sends a coalesced wake-up.
func signal(out chan<- struct{}) {
	select {
	case out <- struct{}{}:
	default:
	}
}

// closeConn closes a dedicated connection, bounded in time.
func closeConn(conn *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	_ = conn.Close(ctx)
}
