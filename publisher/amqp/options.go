package amqp

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/reliar/reliar"
)

// ErrInvalidOption is wrapped by every error that [New] returns for a bad
// option.
var ErrInvalidOption = errors.New("amqp: invalid option")

// DefaultExchange is the exchange messages are published to unless
// [Exchange] says otherwise.
const DefaultExchange = "reliar"

// Option configures a [Publisher].
type Option func(*config) error

type config struct {
	exchange    string
	routingKey  func(*reliar.SerializedEnvelope) string
	poolSize    int
	dialTimeout time.Duration
	heartbeat   time.Duration
	backoffMin  time.Duration
	backoffMax  time.Duration
	logger      *slog.Logger
}

func defaultConfig() config {
	return config{
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

// Exchange is the exchange every message is published to. Defaults to
// [DefaultExchange]. The empty name is the broker's default exchange, which
// routes by queue name: pair it with a [RoutingKeyFunc] that returns one.
func Exchange(name string) Option {
	return func(c *config) error {
		if len(name) > maxShortString {
			return fmt.Errorf("%w: exchange name of %d bytes, over %d", ErrInvalidOption, len(name), maxShortString)
		}
		c.exchange = name
		return nil
	}
}

// RoutingKeyFunc chooses each message's routing key. Defaults to the
// envelope's partition key (its ordering key, else its conversation id), so
// that a consistent-hash exchange keeps the messages of one key on one
// queue. A key over 255 bytes fails the message permanently.
func RoutingKeyFunc(f func(*reliar.SerializedEnvelope) string) Option {
	return func(c *config) error {
		if f == nil {
			return fmt.Errorf("%w: RoutingKeyFunc is nil", ErrInvalidOption)
		}
		c.routingKey = f
		return nil
	}
}

// PoolSize is the number of channels the publisher keeps open, each with
// one Publish or PublishBatch at a time. Defaults to 16, the dispatcher's
// default MaxInFlight; further calls wait for a free channel.
func PoolSize(n int) Option {
	return func(c *config) error {
		if n < 1 {
			return fmt.Errorf("%w: PoolSize %d, want at least 1", ErrInvalidOption, n)
		}
		c.poolSize = n
		return nil
	}
}

// DialTimeout bounds each connection attempt, handshake included. Defaults
// to 10s; the context of [New] bounds the first attempt too.
func DialTimeout(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return fmt.Errorf("%w: DialTimeout %v, want > 0", ErrInvalidOption, d)
		}
		c.dialTimeout = d
		return nil
	}
}

// Heartbeat is the AMQP heartbeat interval, which bounds how long a dead
// connection goes unnoticed (about three intervals). Defaults to 10s.
func Heartbeat(d time.Duration) Option {
	return func(c *config) error {
		if d < time.Second {
			return fmt.Errorf("%w: Heartbeat %v, want at least 1s", ErrInvalidOption, d)
		}
		c.heartbeat = d
		return nil
	}
}

// ReconnectBackoff bounds the wait between reconnection attempts after the
// connection was lost: the first attempt is immediate, then the wait starts
// at minWait and doubles up to maxWait. Defaults to 100ms and 10s.
func ReconnectBackoff(minWait, maxWait time.Duration) Option {
	return func(c *config) error {
		if minWait <= 0 || maxWait < minWait {
			return fmt.Errorf("%w: ReconnectBackoff(%v, %v), want 0 < min <= max", ErrInvalidOption, minWait, maxWait)
		}
		c.backoffMin, c.backoffMax = minWait, maxWait
		return nil
	}
}

// Logger receives the connection's life events: lost, reconnected, failed
// attempts. Defaults to slog.Default(). Payloads and header values are
// never logged.
func Logger(l *slog.Logger) Option {
	return func(c *config) error {
		if l == nil {
			return fmt.Errorf("%w: Logger is nil", ErrInvalidOption)
		}
		c.logger = l
		return nil
	}
}

// newConfig applies opts to the defaults.
func newConfig(opts []Option) (config, error) {
	c := defaultConfig()
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
