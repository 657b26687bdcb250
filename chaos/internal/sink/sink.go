// Package sink counts every publish that reaches the broker, duplicates
// included: a plain core-NATS subscription on the subjects the relay
// publishes to sees each JetStream publish, including the ones the stream
// drops as duplicates by Nats-Msg-Id or refuses.
package sink

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/reliar/reliar"
)

// Sink records the message id of every publish, in arrival order.
type Sink struct {
	nc  *nats.Conn
	sub *nats.Subscription

	mu       sync.Mutex
	attempts []reliar.MessageID
	bad      int
	last     time.Time
}

// Start subscribes to "<prefix>.>" on the NATS server at url.
func Start(url, prefix string) (*Sink, error) {
	nc, err := nats.Connect(url, nats.Name("reliar-chaos-sink"))
	if err != nil {
		return nil, fmt.Errorf("sink: connect: %w", err)
	}
	s := &Sink{nc: nc}
	sub, err := nc.Subscribe(prefix+".>", s.record)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("sink: subscribe: %w", err)
	}
	if err := sub.SetPendingLimits(-1, -1); err != nil {
		nc.Close()
		return nil, fmt.Errorf("sink: pending limits: %w", err)
	}
	if err := nc.Flush(); err != nil {
		nc.Close()
		return nil, fmt.Errorf("sink: flush: %w", err)
	}
	s.sub = sub
	return s, nil
}

// record runs on the subscription's single delivery goroutine, so arrival
// order is the server's order.
func (s *Sink) record(m *nats.Msg) {
	id, err := reliar.ParseMessageID(m.Header.Get(nats.MsgIdHdr))
	s.mu.Lock()
	defer s.mu.Unlock()
	s.last = time.Now()
	if err != nil {
		s.bad++
		return
	}
	s.attempts = append(s.attempts, id)
}

// Attempts returns a copy of the ids seen so far, in arrival order.
func (s *Sink) Attempts() []reliar.MessageID {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]reliar.MessageID(nil), s.attempts...)
}

// Count returns how many publishes were seen, and how many of them
// carried no valid message id.
func (s *Sink) Count() (n, bad int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.attempts), s.bad
}

// WaitQuiet returns once nothing arrived for quiet, or when ctx ends.
func (s *Sink) WaitQuiet(ctx context.Context, quiet time.Duration) error {
	if err := s.nc.FlushWithContext(ctx); err != nil {
		return fmt.Errorf("sink: flush: %w", err)
	}
	tick := time.NewTicker(quiet / 4)
	defer tick.Stop()
	for {
		s.mu.Lock()
		idle := time.Since(s.last)
		s.mu.Unlock()
		if idle >= quiet {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("sink: still receiving: %w", ctx.Err())
		case <-tick.C:
		}
	}
}

// Close drops the subscription and the connection.
func (s *Sink) Close() {
	_ = s.sub.Unsubscribe()
	s.nc.Close()
}
