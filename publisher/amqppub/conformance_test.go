package amqppub_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	amqp091 "github.com/rabbitmq/amqp091-go"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/publisher/amqppub"
	"github.com/reliar/reliar/publisher/publishertest"
)

// messageType is the type of every envelope publishertest builds.
const messageType = "publishertest.happened"

func TestConformance(t *testing.T) {
	t.Parallel()
	publishertest.Run(t, func(t *testing.T) publishertest.Harness {
		// A headers exchange routes publishertest's messages by their
		// cloudEvents:type, while the routing key stays the partition key.
		top := newTopology(t, binding{kind: amqp091.ExchangeHeaders, args: amqp091.Table{
			"x-match":                         "any",
			amqppub.PropertyPrefix + "type":   messageType,
			amqppub.PropertyPrefix + "source": "/dienste/zahlung-für-Ä/100%25",
		}})
		return publishertest.Harness{
			Publisher: newPublisher(t, brokerURL, amqppub.WithExchange(top.exchange)),
			Receive: func(ctx context.Context, n int) ([]publishertest.Received, error) {
				var got []publishertest.Received
				for len(got) < n {
					select {
					case d, ok := <-top.deliveries:
						if !ok {
							return got, fmt.Errorf("consumer of %s closed", top.queue)
						}
						got = append(got, publishertest.Received{Headers: stringHeaders(d.Headers), Payload: d.Body, Key: d.RoutingKey, Message: d})
					case <-ctx.Done():
						return got, fmt.Errorf("received %d of %d: %w", len(got), n, ctx.Err())
					}
				}
				return got, nil
			},
			Decode: func(r publishertest.Received) (*reliar.SerializedEnvelope, error) {
				return amqppub.Envelope(r.Message.(amqp091.Delivery))
			},
			Reference: sdkReference,
			Unroutable: func(t *testing.T) reliar.Publisher {
				return newPublisher(t, brokerURL, amqppub.WithExchange(bareExchange(t)))
			},
			Misconfigured: func(t *testing.T) (reliar.Publisher, func()) {
				// The exchange routes nowhere until the operator binds
				// the harness's queue to it.
				ex := bareExchange(t)
				return newPublisher(t, brokerURL, amqppub.WithExchange(ex)), func() { top.bindFrom(t, ex) }
			},
			TooLarge: func(t *testing.T) *reliar.SerializedEnvelope {
				e := publishertest.Envelope(7)
				e.Payload = make([]byte, overMaxMessageSize)
				return e
			},
			Broken: func(t *testing.T) reliar.Publisher {
				px := newProxy(t)
				p := newPublisher(t, px.url(), amqppub.WithExchange(top.exchange))
				px.stop()
				return p
			},
			Refused: func(t *testing.T, seq int) *reliar.SerializedEnvelope {
				e := publishertest.Envelope(seq)
				e.Metadata.Correlation.CorrelationID = strings.Repeat("x", 256) // over AMQP's 255
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
