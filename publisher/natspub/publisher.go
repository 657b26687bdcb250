package natspub

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/reliar/reliar"
)

// Publisher publishes messages to JetStream. It is safe for concurrent use.
type Publisher struct {
	js     jetstream.JetStream
	nc     *nats.Conn // owned, closed by Close; nil when the caller owns it
	opts   options
	closed atomic.Bool
}

var _ reliar.BatchPublisher = (*Publisher)(nil)

// New returns a publisher over js, whose connection the caller owns and
// closes.
func New(js jetstream.JetStream, opts ...Option) (*Publisher, error) {
	if js == nil {
		return nil, fmt.Errorf("%w: nil JetStream", ErrInvalidOption)
	}
	o, err := buildOptions(opts)
	if err != nil {
		return nil, err
	}
	if len(o.connOpts) > 0 {
		return nil, fmt.Errorf("%w: WithConnOptions needs Connect; New uses the caller's connection", ErrInvalidOption)
	}
	return &Publisher{js: js, opts: o}, nil
}

// Connect connects to the NATS server(s) at url and returns a publisher
// that owns the connection: Close closes it. A deadline on ctx bounds the
// connection attempt; nats.Connect itself cannot be interrupted sooner.
func Connect(ctx context.Context, url string, opts ...Option) (*Publisher, error) {
	o, err := buildOptions(opts)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("natspub: connect: %w", err)
	}
	connOpts := append([]nats.Option{nats.Name("reliar")}, o.connOpts...)
	if d, ok := ctx.Deadline(); ok {
		connOpts = append(connOpts, nats.Timeout(max(time.Until(d), time.Millisecond)))
	}
	nc, err := nats.Connect(url, connOpts...)
	if err != nil {
		return nil, fmt.Errorf("natspub: connect: %w", err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("natspub: jetstream: %w", err)
	}
	return &Publisher{js: js, nc: nc, opts: o}, nil
}

// Publish publishes env and returns nil once the stream acknowledged it
// (also as a duplicate within the stream's duplicate window).
func (p *Publisher) Publish(ctx context.Context, env *reliar.SerializedEnvelope) error {
	if err := p.ready(ctx); err != nil {
		return fmt.Errorf("natspub: publish %s: %w", env.ID, err)
	}
	msg, err := p.message(env)
	if err != nil {
		return reliar.Permanent(fmt.Errorf("natspub: publish %s: %w", env.ID, err))
	}
	if _, err := p.js.PublishMsg(ctx, msg); err != nil {
		return fmt.Errorf("natspub: publish %s: %w", env.ID, classify(err))
	}
	return nil
}

// ready returns the reason not to publish at all: ctx ended, or Close.
func (p *Publisher) ready(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if p.closed.Load() {
		return ErrClosed
	}
	return nil
}

// Close makes later calls to Publish fail with ErrClosed and, when the
// publisher owns its connection (Connect), closes it. It is idempotent and
// returns nil.
func (p *Publisher) Close() error {
	if p.closed.Swap(true) {
		return nil
	}
	if p.nc != nil {
		p.nc.Close()
	}
	return nil
}
