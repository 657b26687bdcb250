package amqppub

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	amqp091 "github.com/rabbitmq/amqp091-go"
	"github.com/reliar/reliar"
)

// Publisher publishes outbox messages to RabbitMQ. It owns its connection,
// which it reopens when it is lost, and a pool of channels in confirm mode.
// It is safe for concurrent use; Close releases it.
type Publisher struct {
	url  string
	opts options

	// ctx ends when Close is called; it bounds reconnection attempts.
	ctx    context.Context
	cancel context.CancelFunc
	// wg counts the publisher's goroutines: the connection supervisor,
	// channel openers and closers.
	wg sync.WaitGroup
	// slots holds one token per channel in use, so at most PoolSize calls
	// publish at once.
	slots chan struct{}

	mu      sync.Mutex
	conn    *amqp091.Connection // nil while disconnected
	gen     uint64              // incremented per connection
	idle    []*channel          // open channels of connection gen
	lastErr error               // why the connection was lost or not reopened
	closed  bool

	// maxSize is the broker's max_message_size once a PRECONDITION_FAILED
	// told it; 0 until then.
	maxSize atomic.Int64
}

var _ reliar.BatchPublisher = (*Publisher)(nil)

// New connects to the broker at url (amqp:// or amqps://) and returns a
// publisher to the configured exchange. It fails when the broker cannot be
// reached by ctx's end or the exchange does not exist: declare the exchange
// first (a topic, direct, headers or x-consistent-hash exchange, durable).
// An exchange deleted later fails every publish transiently until it is
// declared again.
func New(ctx context.Context, url string, opts ...Option) (*Publisher, error) {
	o, err := newOptions(opts)
	if err != nil {
		return nil, err
	}
	if _, err := amqp091.ParseURI(url); err != nil {
		return nil, fmt.Errorf("%w: url: %w", ErrInvalidOption, err)
	}
	p := &Publisher{url: url, opts: o, slots: make(chan struct{}, o.poolSize)}
	conn, closes, err := p.dial(ctx)
	if err != nil {
		return nil, err
	}
	if err := p.checkExchange(conn); err != nil {
		_ = conn.Close()
		return nil, err
	}
	p.ctx, p.cancel = context.WithCancel(context.WithoutCancel(ctx))
	p.conn, p.gen = conn, 1
	p.wg.Add(1)
	go p.supervise(conn, closes)
	return p, nil
}

// checkExchange fails when the configured exchange does not exist.
func (p *Publisher) checkExchange(conn *amqp091.Connection) error {
	if p.opts.exchange == "" {
		return nil
	}
	ch, err := conn.Channel()
	if err != nil {
		return fmt.Errorf("amqppub: open channel: %w", err)
	}
	defer ch.Close()
	if err := ch.ExchangeDeclarePassive(p.opts.exchange, amqp091.ExchangeDirect, true, false, false, false, nil); err != nil {
		return classify(fmt.Errorf("amqppub: exchange %q: %w", p.opts.exchange, err))
	}
	return nil
}

// Close stops reconnecting, closes the connection and waits for the
// publisher's goroutines. Calls in flight fail; later calls return
// [ErrClosed]. Close is idempotent.
func (p *Publisher) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	conn := p.conn
	p.conn, p.idle = nil, nil
	p.mu.Unlock()

	p.cancel()
	var err error
	if conn != nil {
		if cerr := conn.Close(); cerr != nil && !errors.Is(cerr, amqp091.ErrClosed) {
			err = fmt.Errorf("amqppub: close connection: %w", cerr)
		}
	}
	p.wg.Wait()
	return err
}
