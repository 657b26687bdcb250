package amqppub

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"time"

	amqp091 "github.com/rabbitmq/amqp091-go"
)

// dial opens a connection within the dial timeout and ctx, and registers
// for its closing.
func (p *Publisher) dial(ctx context.Context) (*amqp091.Connection, chan *amqp091.Error, error) {
	ctx, cancel := context.WithTimeout(ctx, p.opts.dialTimeout)
	defer cancel()
	var stop func() bool
	cfg := amqp091.Config{
		Heartbeat: p.opts.heartbeat,
		Locale:    "en_US",
		Dial: func(network, addr string) (net.Conn, error) {
			var d net.Dialer
			nc, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			// The handshake honours ctx too: its end interrupts any read
			// or write. amqp091 clears the deadline once the connection
			// is open.
			deadline, _ := ctx.Deadline()
			if err := nc.SetDeadline(deadline); err != nil {
				_ = nc.Close()
				return nil, err
			}
			stop = context.AfterFunc(ctx, func() { _ = nc.SetDeadline(time.Unix(1, 0)) })
			return nc, nil
		},
	}
	conn, err := amqp091.DialConfig(p.url, cfg)
	if stop != nil && !stop() && err == nil {
		// ctx ended as the handshake completed: the deadline may already
		// be in the past, so this connection cannot be trusted.
		_ = conn.Close()
		err = ctx.Err()
	}
	if err != nil {
		if cerr := deadlineErr(ctx); cerr != nil {
			err = fmt.Errorf("%w (%w)", err, cerr)
		}
		return nil, nil, classify(fmt.Errorf("amqppub: connect: %w", err))
	}
	return conn, conn.NotifyClose(make(chan *amqp091.Error, 1)), nil
}

// deadlineErr returns ctx's error, or context.DeadlineExceeded once its
// deadline passed: the socket deadline can fire a moment before ctx ends.
func deadlineErr(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) {
		return context.DeadlineExceeded
	}
	return nil
}

// supervise waits for the connection to close, then reconnects with
// backoff until it succeeds or the publisher is closed.
func (p *Publisher) supervise(conn *amqp091.Connection, closes chan *amqp091.Error) {
	defer p.wg.Done()
	for {
		select {
		case <-p.ctx.Done():
			return
		case aerr := <-closes:
			var err error = amqp091.ErrClosed
			if aerr != nil {
				err = aerr
			}
			p.lost(conn, err)
		}
		var ok bool
		if conn, closes, ok = p.reconnect(); !ok {
			return
		}
	}
}

// lost forgets conn and its channels.
func (p *Publisher) lost(conn *amqp091.Connection, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conn != conn {
		return
	}
	p.conn, p.idle, p.lastErr = nil, nil, err
	p.opts.logger.Warn("amqppub: connection lost", "error", err)
}

// reconnect dials until a connection opens, waiting between attempts with
// exponential backoff and jitter. It reports false when the publisher was
// closed meanwhile.
func (p *Publisher) reconnect() (*amqp091.Connection, chan *amqp091.Error, bool) {
	wait := p.opts.backoffMin
	for attempt := 1; ; attempt++ {
		if p.ctx.Err() != nil {
			return nil, nil, false
		}
		conn, closes, err := p.dial(p.ctx)
		if err == nil {
			p.mu.Lock()
			if p.closed {
				p.mu.Unlock()
				_ = conn.Close()
				return nil, nil, false
			}
			p.conn, p.lastErr = conn, nil
			p.gen++
			p.mu.Unlock()
			p.opts.logger.Info("amqppub: reconnected", "attempts", attempt)
			return conn, closes, true
		}
		p.mu.Lock()
		p.lastErr = err
		p.mu.Unlock()
		if p.ctx.Err() != nil {
			return nil, nil, false
		}
		p.opts.logger.Warn("amqppub: reconnect failed", "attempt", attempt, "retry_in", wait, "error", err)
		t := time.NewTimer(jitter(wait))
		select {
		case <-p.ctx.Done():
			t.Stop()
			return nil, nil, false
		case <-t.C:
		}
		wait = min(2*wait, p.opts.backoffMax)
	}
}

// jitter spreads d by ±20% so that many publishers do not reconnect in
// step.
func jitter(d time.Duration) time.Duration {
	return time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
}
