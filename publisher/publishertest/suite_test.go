package publishertest_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/publisher/publishertest"
)

// memBroker is an in-memory broker: a queue of delivered messages. It lets
// the suite be checked without a network.
type memBroker struct {
	mu     sync.Mutex
	closed bool
	queue  chan publishertest.Received
}

var (
	errNoRoute = errors.New("membroker: no route")
	errClosed  = errors.New("membroker: closed")
)

func newMemBroker() *memBroker {
	return &memBroker{queue: make(chan publishertest.Received, 1024)}
}

func (b *memBroker) Publish(ctx context.Context, e *reliar.SerializedEnvelope) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("membroker: publish %s: %w", e.ID, err)
	}
	if e.MessageType == "refused" {
		return reliar.Permanent(fmt.Errorf("membroker: publish %s: %w", e.ID, errNoRoute))
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return errClosed
	}
	b.queue <- publishertest.Received{
		Headers: reliar.CloudEventHeaders(e),
		Payload: e.Payload,
		Key:     e.PartitionKey(),
	}
	return nil
}

func (b *memBroker) PublishBatch(ctx context.Context, envs []*reliar.SerializedEnvelope) []error {
	res := make([]error, len(envs))
	for i, e := range envs {
		res[i] = b.Publish(ctx, e)
	}
	return res
}

func (b *memBroker) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	return nil
}

func (b *memBroker) Receive(ctx context.Context, n int) ([]publishertest.Received, error) {
	var got []publishertest.Received
	for len(got) < n {
		select {
		case r := <-b.queue:
			got = append(got, r)
		case <-ctx.Done():
			return got, fmt.Errorf("membroker: receive: %w", ctx.Err())
		}
	}
	return got, nil
}

func TestSuiteOnMemoryBroker(t *testing.T) {
	publishertest.Run(t, func(t *testing.T) publishertest.Harness {
		b := newMemBroker()
		return publishertest.Harness{
			Publisher: b,
			Receive:   b.Receive,
			Unroutable: func(t *testing.T) reliar.Publisher {
				return reliar.PublisherFunc(func(ctx context.Context, e *reliar.SerializedEnvelope) error {
					return reliar.Permanent(errNoRoute)
				})
			},
			Broken: func(t *testing.T) reliar.Publisher {
				return reliar.PublisherFunc(func(ctx context.Context, e *reliar.SerializedEnvelope) error {
					<-ctx.Done()
					return fmt.Errorf("membroker: unreachable: %w", ctx.Err())
				})
			},
			Refused: func(t *testing.T, seq int) *reliar.SerializedEnvelope {
				e := publishertest.Envelope(seq)
				e.MessageType = "refused"
				return e
			},
			Features: publishertest.Features{
				Batch:             true,
				KeyIsPartitionKey: true,
				Limitations:       "in memory: nothing is durable and nothing is deduplicated",
			},
		}
	})
}
