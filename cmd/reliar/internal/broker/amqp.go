package broker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	amqp091 "github.com/rabbitmq/amqp091-go"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/publisher/amqppub"
)

// Settings of the RabbitMQ connections.
const (
	// amqpDefaultExchangeFlag names the broker's default exchange in
	// --exchange, where an empty value means amqppub.DefaultExchange.
	amqpDefaultExchangeFlag = "-"
	// amqpMaxPool caps the channel pool, whatever the concurrency.
	amqpMaxPool = 128
	// amqpProbeTimeout bounds the readiness probe's connection attempt
	// when its context has no deadline.
	amqpProbeTimeout = 5 * time.Second
)

// amqpMaxName is the longest exchange name AMQP carries (a short string).
const amqpMaxName = 255

// parseAMQP checks an amqp:// or amqps:// URL and the exchange and routing
// key options.
func parseAMQP(raw string, o Options) (func(ctx context.Context) (*Broker, error), error) {
	if _, err := amqp091.ParseURI(raw); err != nil {
		return nil, badURL(raw, "%v", err)
	}
	opts := []amqppub.Option{amqppub.WithLogger(o.logger())}
	switch o.Exchange {
	case "":
	case amqpDefaultExchangeFlag:
		opts = append(opts, amqppub.WithExchange(""))
	default:
		if len(o.Exchange) > amqpMaxName {
			return nil, fmt.Errorf("%w: --exchange of %d bytes, over the %d AMQP allows", ErrBadOption, len(o.Exchange), amqpMaxName)
		}
		opts = append(opts, amqppub.WithExchange(o.Exchange))
	}
	if o.RoutingKey != "" {
		opts = append(opts, amqppub.WithRoutingKeyFunc(routingKey(o.RoutingKey)))
	}
	conc := o.Concurrency
	if conc <= 0 {
		conc = 16
	}
	opts = append(opts, amqppub.WithPoolSize(min(conc, amqpMaxPool)))
	exchange := amqpExchange(o.Exchange)
	return func(ctx context.Context) (*Broker, error) { return openAMQP(ctx, raw, exchange, opts) }, nil
}

// routingKey returns the routing key function of a template in which {type}
// stands for the message type and {key} for the partition key.
func routingKey(template string) func(*reliar.SerializedEnvelope) string {
	if !strings.Contains(template, "{") {
		return func(*reliar.SerializedEnvelope) string { return template }
	}
	return func(env *reliar.SerializedEnvelope) string {
		return strings.NewReplacer("{type}", env.MessageType, "{key}", env.PartitionKey()).Replace(template)
	}
}

// openAMQP connects the publisher (which reconnects by itself) and a probe
// connection that tells readiness whether the broker answers.
func openAMQP(ctx context.Context, raw, exchange string, opts []amqppub.Option) (*Broker, error) {
	pub, err := amqppub.New(ctx, raw, opts...)
	if err != nil {
		if errors.Is(err, amqppub.ErrInvalidOption) {
			return nil, badOption(err)
		}
		return nil, err
	}
	probe := &amqpProbe{url: raw}
	return &Broker{
		Publisher: pub,
		check:     probe.check,
		diagnose:  amqpDiagnose(raw, exchange),
		dest:      func(*reliar.SerializedEnvelope) string { return amqpDestination(exchange) },
		close: func() error {
			probe.close()
			return pub.Close()
		},
	}, nil
}

// amqpProbe holds a connection of its own to the broker: the publisher does
// not say whether its connection is up, so readiness asks this one, and
// reconnects it when it was lost.
type amqpProbe struct {
	url  string
	mu   sync.Mutex
	conn *amqp091.Connection
}

func (p *amqpProbe) check(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conn != nil && !p.conn.IsClosed() {
		return nil
	}
	timeout := amqpProbeTimeout
	if d, ok := ctx.Deadline(); ok {
		timeout = max(time.Until(d), time.Millisecond)
	}
	conn, err := amqp091.DialConfig(p.url, amqp091.Config{
		Dial:       amqp091.DefaultDial(timeout),
		Properties: amqp091.Table{"connection_name": "reliar relay readiness"},
	})
	if err != nil {
		return fmt.Errorf("amqppub: not connected: %w", err)
	}
	p.conn = conn
	return nil
}

func (p *amqpProbe) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conn != nil {
		_ = p.conn.Close()
		p.conn = nil
	}
}
