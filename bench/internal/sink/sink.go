// Package sink is the benchmark's no-op destination: it records when each
// message arrived, counts duplicates, and signals when every message of a
// run has arrived at least once.
package sink

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/reliar/reliar/bench/internal/payload"
)

// ErrOutOfRange is returned for a sequence number the sink was not sized for.
var ErrOutOfRange = errors.New("sink: sequence number out of range")

// Sink receives the messages of one run. It is safe for concurrent use.
type Sink struct {
	received []atomic.Int64 // arrival, Unix nanoseconds; 0 = not yet
	sent     []atomic.Int64 // send time carried by the message
	distinct atomic.Int64
	dups     atomic.Int64
	done     chan struct{}
	once     sync.Once
	now      func() int64
}

// New returns a sink for messages numbered 0 to n-1.
func New(n int) *Sink {
	return &Sink{
		received: make([]atomic.Int64, n),
		sent:     make([]atomic.Int64, n),
		done:     make(chan struct{}),
		now:      func() int64 { return time.Now().UnixNano() },
	}
}

// Deliver records the arrival of message seq, sent at sentNs.
func (s *Sink) Deliver(seq int, sentNs int64) error {
	if seq < 0 || seq >= len(s.received) {
		return fmt.Errorf("%w: %d not in [0, %d)", ErrOutOfRange, seq, len(s.received))
	}
	if !s.received[seq].CompareAndSwap(0, s.now()) {
		s.dups.Add(1)
		return nil
	}
	s.sent[seq].Store(sentNs)
	if s.distinct.Add(1) == int64(len(s.received)) {
		s.once.Do(func() { close(s.done) })
	}
	return nil
}

// DeliverPayload decodes an encoded payload.Doc and records its arrival.
func (s *Sink) DeliverPayload(b []byte) error {
	seq, ts, err := payload.Decode(b)
	if err != nil {
		return err
	}
	return s.Deliver(seq, ts)
}

// DeliverDoc records the arrival of a decoded payload.Doc.
func (s *Sink) DeliverDoc(d payload.Doc) error {
	seq, ts, err := d.Fields()
	if err != nil {
		return err
	}
	return s.Deliver(seq, ts)
}

// Done is closed once every message has arrived.
func (s *Sink) Done() <-chan struct{} { return s.done }

// Has reports whether message seq has arrived.
func (s *Sink) Has(seq int) bool {
	return seq >= 0 && seq < len(s.received) && s.received[seq].Load() != 0
}

// Size is the number of messages the sink waits for.
func (s *Sink) Size() int { return len(s.received) }

// Received is the number of distinct messages that arrived.
func (s *Sink) Received() int64 { return s.distinct.Load() }

// Duplicates is the number of arrivals of a message that had already arrived.
func (s *Sink) Duplicates() int64 { return s.dups.Load() }

// Arrival returns when message seq arrived and the send time it carried, in
// Unix nanoseconds, and whether it has arrived.
func (s *Sink) Arrival(seq int) (arrived, sent int64, ok bool) {
	if seq < 0 || seq >= len(s.received) {
		return 0, 0, false
	}
	arrived = s.received[seq].Load()
	return arrived, s.sent[seq].Load(), arrived != 0
}
