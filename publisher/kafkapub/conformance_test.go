package kafkapub_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/publisher/kafkapub"
	"github.com/reliar/reliar/publisher/publishertest"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// messageType is the type of every envelope publishertest builds.
const messageType = "publishertest.happened"

func TestConformance(t *testing.T) {
	t.Parallel()
	publishertest.Run(t, func(t *testing.T) publishertest.Harness {
		topic := uniqueTopic(t)
		c := newCluster(t, topic)
		createTopic(t, c, topic+"-small", map[string]string{"max.message.bytes": "4096"})
		p := newPublisher(t, c, nil, kafkapub.WithTopicFunc(func(e *reliar.SerializedEnvelope) string {
			switch e.MessageType {
			case "refused.message":
				return "not a topic name"
			case "large.message":
				return topic + "-small"
			}
			return topic
		}))
		return publishertest.Harness{
			Publisher: p,
			Receive:   newReceiver(t, c.ListenAddrs(), topic, topic+"-later"),
			Decode: func(r publishertest.Received) (*reliar.SerializedEnvelope, error) {
				return kafkapub.Envelope(r.Message.(*kgo.Record))
			},
			Reference: sdkReference,
			Unroutable: func(t *testing.T) reliar.Publisher {
				return newPublisher(t, c, nil, kafkapub.WithDefaultTopic("no-such-topic"))
			},
			Misconfigured: func(t *testing.T) (reliar.Publisher, func()) {
				p := newPublisher(t, c, fastRetries(), kafkapub.WithDefaultTopic(topic+"-later"))
				return p, func() { createTopic(t, c, topic+"-later", nil) }
			},
			TooLarge: func(t *testing.T) *reliar.SerializedEnvelope {
				e := publishertest.Envelope(7)
				e.MessageType = "large.message"
				e.Payload = make([]byte, 4096)
				return e
			},
			Broken: func(t *testing.T) reliar.Publisher {
				cl, err := kafkapub.NewClient([]string{closedAddr(t)})
				if err != nil {
					t.Fatalf("NewClient: %v", err)
				}
				t.Cleanup(cl.Close)
				p, err := kafkapub.New(cl, kafkapub.WithDefaultTopic(topic))
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				return p
			},
			Refused: func(t *testing.T, seq int) *reliar.SerializedEnvelope {
				e := publishertest.Envelope(seq)
				e.MessageType = "refused.message"
				return e
			},
			Features: publishertest.Features{
				Batch:             true,
				KeyIsPartitionKey: true,
				Limitations: "kfake, the in-process Kafka, has no replication: acks=all is " +
					"exercised against a single broker, not its durability across replicas; " +
					"Kafka does not deduplicate by message id across publishes",
			},
		}
	})
}

// newReceiver returns a Receive function reading topics from their start
// with a consumer client closed when t ends. Records of one poll beyond
// the n asked for are kept for the next call.
func newReceiver(t *testing.T, addrs []string, topics ...string) func(context.Context, int) ([]publishertest.Received, error) {
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(addrs...),
		kgo.ConsumeTopics(topics...),
		kgo.MetadataMinAge(50*time.Millisecond),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
	)
	if err != nil {
		t.Fatalf("consumer: %v", err)
	}
	t.Cleanup(cl.Close)
	var (
		mu      sync.Mutex
		pending []publishertest.Received
	)
	return func(ctx context.Context, n int) ([]publishertest.Received, error) {
		mu.Lock()
		defer mu.Unlock()
		for len(pending) < n {
			fs := cl.PollFetches(ctx)
			if err := ctx.Err(); err != nil {
				got := pending
				pending = nil
				return got, fmt.Errorf("received %d of %d: %w", len(got), n, err)
			}
			for _, e := range fs.Errors() {
				if errors.Is(e.Err, kerr.UnknownTopicOrPartition) {
					continue // a topic created later
				}
				return nil, fmt.Errorf("consume %s: %w", e.Topic, e.Err)
			}
			for _, r := range fs.Records() {
				pending = append(pending, publishertest.Received{Headers: headerMap(r), Payload: r.Value, Key: string(r.Key), Message: r})
			}
		}
		got := pending[:n:n]
		pending = pending[n:]
		return got, nil
	}
}

// closedAddr returns an address on which nothing listens.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatalf("close listener: %v", err)
	}
	return addr
}
