package demo

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/reliar/reliar"
)

// idHeaders are the message headers that carry the outbox message id, in
// the order they are read.
var idHeaders = []string{"ce-id", "Nats-Msg-Id"}

// delivery is what the consumer saw of one message id.
type delivery struct {
	// first is when the id was first delivered.
	first time.Time
	// count is how many times it was delivered.
	count int
}

// consumer reads the demo's stream from its start and counts every
// delivery of every message id, duplicates included: it does not
// deduplicate, so that duplicates show.
type consumer struct {
	cc jetstream.ConsumeContext

	mu         sync.Mutex
	deliveries map[reliar.MessageID]*delivery
	// unreadable counts messages without a readable id.
	unreadable int

	// distinct is len(deliveries), readable without the lock.
	distinct atomic.Int64
}

// startConsumer creates an ephemeral consumer on the broker's stream that
// acknowledges every message (so a redelivery is counted as a duplicate)
// and starts consuming.
func startConsumer(ctx context.Context, b *broker, expected int) (*consumer, error) {
	c := &consumer{deliveries: make(map[reliar.MessageID]*delivery, expected)}
	cons, err := b.stream.CreateConsumer(ctx, jetstream.ConsumerConfig{
		AckPolicy:         jetstream.AckExplicitPolicy,
		DeliverPolicy:     jetstream.DeliverAllPolicy,
		MaxAckPending:     -1,
		InactiveThreshold: time.Minute,
	})
	if err != nil {
		return nil, fmt.Errorf("create consumer: %w", err)
	}
	c.cc, err = cons.Consume(c.handle, jetstream.PullMaxMessages(1000))
	if err != nil {
		return nil, fmt.Errorf("consume: %w", err)
	}
	return c, nil
}

// handle records one delivery and acknowledges it.
func (c *consumer) handle(msg jetstream.Msg) {
	now := time.Now()
	id, ok := messageID(msg)
	c.mu.Lock()
	switch d := c.deliveries[id]; {
	case !ok:
		c.unreadable++
	case d == nil:
		c.deliveries[id] = &delivery{first: now, count: 1}
		c.distinct.Add(1)
	default:
		d.count++
	}
	c.mu.Unlock()
	_ = msg.Ack()
}

// messageID reads the outbox message id from the message's headers.
func messageID(msg jetstream.Msg) (reliar.MessageID, bool) {
	h := msg.Headers()
	for _, name := range idHeaders {
		if v := h.Get(name); v != "" {
			id, err := uuid.Parse(v)
			return id, err == nil
		}
	}
	return reliar.MessageID{}, false
}

// stop stops consuming and waits until the handler has returned for the
// last time, or ctx ends.
func (c *consumer) stop(ctx context.Context) {
	c.cc.Stop()
	select {
	case <-c.cc.Closed():
	case <-ctx.Done():
	}
}

// snapshot returns the deliveries seen so far and the unreadable count. The
// map must not be changed.
func (c *consumer) snapshot() (map[reliar.MessageID]*delivery, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[reliar.MessageID]*delivery, len(c.deliveries))
	for id, d := range c.deliveries {
		cp := *d
		out[id] = &cp
	}
	return out, c.unreadable
}
