package amqp_test

import (
	"context"
	"fmt"
	"testing"

	amqp091 "github.com/rabbitmq/amqp091-go"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/publisher/amqp"
	"github.com/reliar/reliar/publisher/publishertest"
)

// messageType is the type of every envelope publishertest builds.
const messageType = "publishertest.happened"

func TestConformance(t *testing.T) {
	t.Parallel()
	publishertest.Run(t, func(t *testing.T) publishertest.Harness {
		// A headers exchange routes publishertest's messages by ce-type,
		// so that one of another type is unroutable, while the routing key
		// stays the partition key.
		top := newTopology(t, binding{kind: amqp091.ExchangeHeaders, args: amqp091.Table{
			"x-match":         "any",
			reliar.HeaderType: messageType,
		}})
		return publishertest.Harness{
			Publisher: newPublisher(t, brokerURL, amqp.Exchange(top.exchange)),
			Receive: func(ctx context.Context, n int) ([]publishertest.Received, error) {
				var got []publishertest.Received
				for len(got) < n {
					select {
					case d, ok := <-top.deliveries:
						if !ok {
							return got, fmt.Errorf("consumer of %s closed", top.queue)
						}
						got = append(got, publishertest.Received{Headers: stringHeaders(d.Headers), Payload: d.Body, Key: d.RoutingKey})
					case <-ctx.Done():
						return got, fmt.Errorf("received %d of %d: %w", len(got), n, ctx.Err())
					}
				}
				return got, nil
			},
			Unroutable: func(t *testing.T) reliar.Publisher {
				return newPublisher(t, brokerURL, amqp.Exchange(bareExchange(t)))
			},
			Broken: func(t *testing.T) reliar.Publisher {
				px := newProxy(t)
				p := newPublisher(t, px.url(), amqp.Exchange(top.exchange))
				px.stop()
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
				Limitations:       "RabbitMQ does not deduplicate by message id",
			},
		}
	})
}
