package amqppub

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/reliar/reliar"
)

// ErrInvalidOption is wrapped by every error that [New] returns for a bad
// option.
var ErrInvalidOption = errors.New("amqppub: invalid option")

// DefaultExchange is the exchange messages are published to unless
// [WithExchange] says otherwise.
const DefaultExchange = "reliar"

// Option configures a [Publisher]. Options validate their arguments and
// return an error wrapping [ErrInvalidOption].
type Option func(*options) error

type options struct {
	exchange    string
	routingKey  func(*reliar.SerializedEnvelope) string
	poolSize    int
	dialTimeout time.Duration
	heartbeat   time.Duration
	backoffMin  time.Duration
	backoffMax  time.Duration
	logger      *slog.Logger
}

func defaultOptions() options {
	return options{
		exchange:    DefaultExchange,
		routingKey:  (*reliar.SerializedEnvelope).PartitionKey,
		poolSize:    16,
		dialTimeout: 10 * time.Second,
		heartbeat:   10 * time.Second,
		backoffMin:  100 * time.Millisecond,
		backoffMax:  10 * time.Second,
		logger:      slog.Default(),
	}
}

// WithExchange is the exchange every message is published to. Defaults to
// [DefaultExchange]. The empty name is the broker's default exchange, which
// routes by queue name: pair it with a [WithRoutingKeyFunc] that returns one.
func WithExchange(name string) Option {
	return func(c *options) error {
		if len(name) > maxShortString {
			return fmt.Errorf("%w: WithExchange: a name of %d bytes, over %d", ErrInvalidOption, len(name), maxShortString)
		}
		c.exchange = name
		return nil
	}
}

// WithRoutingKeyFunc chooses each message's routing key. Defaults to the
// envelope's partition key (its ordering key, else its conversation id), so
// that a consistent-hash exchange keeps the messages of one key on one
// queue. A key over 255 bytes fails the message permanently.
func WithRoutingKeyFunc(f func(*reliar.SerializedEnvelope) string) Option {
	return func(c *options) error {
		if f == nil {
			return fmt.Errorf("%w: WithRoutingKeyFunc is nil", ErrInvalidOption)
		}
		c.routingKey = f
		return nil
	}
}

// WithPoolSize is the number of channels the publisher keeps open, each with
// one Publish or PublishBatch at a time. Defaults to 16, the dispatcher's
// default MaxInFlight; further calls wait for a free channel.
func WithPoolSize(n int) Option {
	return func(c *options) error {
		if n < 1 {
			return fmt.Errorf("%w: WithPoolSize %d, want at least 1", ErrInvalidOption, n)
		}
		c.poolSize = n
		return nil
	}
}

// WithDialTimeout bounds each connection attempt, handshake included. Defaults
// to 10s; the context of [New] bounds the first attempt too.
func WithDialTimeout(d time.Duration) Option {
	return func(c *options) error {
		if d <= 0 {
			return fmt.Errorf("%w: WithDialTimeout %v, want > 0", ErrInvalidOption, d)
		}
		c.dialTimeout = d
		return nil
	}
}

// WithHeartbeat is the AMQP heartbeat interval, which bounds how long a dead
// connection goes unnoticed (about three intervals). Defaults to 10s.
func WithHeartbeat(d time.Duration) Option {
	return func(c *options) error {
		if d < time.Second {
			return fmt.Errorf("%w: WithHeartbeat %v, want at least 1s", ErrInvalidOption, d)
		}
		c.heartbeat = d
		return nil
	}
}

// WithReconnectBackoff bounds the wait between reconnection attempts after the
// connection was lost: the first attempt is immediate, then the wait starts
// at minWait and doubles up to maxWait. Defaults to 100ms and 10s.
func WithReconnectBackoff(minWait, maxWait time.Duration) Option {
	return func(c *options) error {
		if minWait <= 0 || maxWait < minWait {
			return fmt.Errorf("%w: WithReconnectBackoff(%v, %v), want 0 < min <= max", ErrInvalidOption, minWait, maxWait)
		}
		c.backoffMin, c.backoffMax = minWait, maxWait
		return nil
	}
}

// WithLogger receives the connection's life events: lost, reconnected, failed
// attempts. Defaults to slog.Default(). Payloads and header values are
// never logged.
func WithLogger(l *slog.Logger) Option {
	return func(c *options) error {
		if l == nil {
			return fmt.Errorf("%w: WithLogger is nil", ErrInvalidOption)
		}
		c.logger = l
		return nil
	}
}

// newOptions applies opts to the defaults.
func newOptions(opts []Option) (options, error) {
	c := defaultOptions()
	for _, o := range opts {
		if o == nil {
			return c, fmt.Errorf("%w: nil option", ErrInvalidOption)
		}
		if err := o(&c); err != nil {
			return c, err
		}
	}
	return c, nil
}
