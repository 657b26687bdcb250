package amqppub

import (
	"context"
	"fmt"
	"time"

	amqp091 "github.com/rabbitmq/amqp091-go"
)

// returnWindow is the most messages a channel has awaiting confirmation at
// once, and the capacity of its returns buffer: amqp091 drops a return it
// cannot deliver within 5s, and a dropped return would pass an unroutable
// message as delivered.
const returnWindow = 128

// channel is one AMQP channel in confirm mode, used by one call at a time.
type channel struct {
	ch      *amqp091.Channel
	gen     uint64
	closes  chan *amqp091.Error
	returns chan amqp091.Return

	// returned holds the returns received, by message id, until the
	// confirmation of their message.
	returned map[string]amqp091.Return
	// closeErr is why the channel closed, once it did.
	closeErr error
	// dirty is set when the channel may still carry confirmations or
	// returns of an abandoned call: it is not reused.
	dirty bool
}

// acquire waits for a free slot, then takes an idle channel of the current
// connection or opens one.
func (p *Publisher) acquire(ctx context.Context) (*channel, error) {
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("amqppub: wait for a channel: %w", ctx.Err())
	}
	c, err := p.take(ctx)
	if err != nil {
		<-p.slots
		return nil, err
	}
	return c, nil
}

// take returns an idle channel, or opens one on the current connection.
func (p *Publisher) take(ctx context.Context) (*channel, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, ErrClosed
	}
	conn, gen, lastErr := p.conn, p.gen, p.lastErr
	for len(p.idle) > 0 {
		c := p.idle[len(p.idle)-1]
		p.idle = p.idle[:len(p.idle)-1]
		if !c.ch.IsClosed() {
			p.mu.Unlock()
			return c, nil
		}
	}
	p.mu.Unlock()
	if conn == nil {
		return nil, fmt.Errorf("%w: %w", ErrNotConnected, lastErr)
	}
	return p.open(ctx, conn, gen)
}

// opened is the result of opening a channel.
type opened struct {
	c   *channel
	err error
}

// open opens a channel in confirm mode on conn. Opening is a round trip
// that amqp091 cannot cancel, so it runs in a goroutine of the publisher:
// when ctx ends first, the goroutine hands its channel to the pool.
func (p *Publisher) open(ctx context.Context, conn *amqp091.Connection, gen uint64) (*channel, error) {
	res := make(chan opened)
	giveUp := make(chan struct{})
	started := p.spawn(func() {
		c, err := openChannel(conn, gen)
		select {
		case res <- opened{c, err}:
		case <-giveUp:
			if err == nil {
				p.release(c)
			}
		}
	})
	if !started {
		return nil, ErrClosed
	}
	select {
	case r := <-res:
		return r.c, r.err
	case <-ctx.Done():
		close(giveUp)
		return nil, fmt.Errorf("amqppub: open channel: %w", ctx.Err())
	}
}

func openChannel(conn *amqp091.Connection, gen uint64) (*channel, error) {
	ch, err := conn.Channel()
	if err != nil {
		return nil, classify(fmt.Errorf("amqppub: open channel: %w", err))
	}
	if err := ch.Confirm(false); err != nil {
		_ = ch.Close()
		return nil, classify(fmt.Errorf("amqppub: confirm mode: %w", err))
	}
	return &channel{
		ch:       ch,
		gen:      gen,
		closes:   ch.NotifyClose(make(chan *amqp091.Error, 1)),
		returns:  ch.NotifyReturn(make(chan amqp091.Return, returnWindow)),
		returned: make(map[string]amqp091.Return),
	}, nil
}

// put gives back a channel taken with acquire and frees its slot.
func (p *Publisher) put(c *channel) {
	p.release(c)
	<-p.slots
}

// release keeps a healthy channel of the current connection for reuse
// and closes any other.
func (p *Publisher) release(c *channel) {
	p.mu.Lock()
	keep := !p.closed && !c.dirty && c.closeErr == nil && c.gen == p.gen && p.conn != nil &&
		!c.ch.IsClosed() && len(p.idle) < p.opts.poolSize
	if keep {
		// Every return of the call preceded its ack, so any left is stale.
		clear(c.returned)
		p.idle = append(p.idle, c)
	}
	p.mu.Unlock()
	if !keep && !c.ch.IsClosed() {
		// Closing is a round trip too; the connection's end unblocks it.
		// Once the publisher is closed, its connection's end closes c.
		p.spawn(func() { _ = c.ch.Close() })
	}
}

// spawn runs f in a goroutine that Close waits for, unless the publisher
// is closed already. Counting it under mu keeps every wg.Add before the
// wg.Wait of Close.
func (p *Publisher) spawn(f func()) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.wg.Go(f)
	return true
}

// closeWait bounds the wait for a closed channel's reason: amqp091 marks a
// channel closed before it hands out the server's error.
const closeWait = time.Second

// closed reports whether the channel has closed, recording why. It waits
// for the reason at most closeWait, and not past ctx's end.
func (c *channel) closed(ctx context.Context) bool {
	if c.closeErr != nil {
		return true
	}
	select {
	case aerr, ok := <-c.closes:
		c.setCloseErr(aerr, ok)
		return true
	default:
	}
	if !c.ch.IsClosed() {
		return false
	}
	t := time.NewTimer(closeWait)
	defer t.Stop()
	select {
	case aerr, ok := <-c.closes:
		c.setCloseErr(aerr, ok)
	case <-t.C:
		c.closeErr = amqp091.ErrClosed
	case <-ctx.Done():
		c.closeErr = amqp091.ErrClosed
	}
	return true
}

func (c *channel) setCloseErr(aerr *amqp091.Error, ok bool) {
	if ok && aerr != nil {
		c.closeErr = aerr
		return
	}
	c.closeErr = amqp091.ErrClosed
}

// drainReturns moves the returns received so far into c.returned.
func (c *channel) drainReturns() {
	for {
		select {
		case r, ok := <-c.returns:
			if !ok {
				return
			}
			c.returned[r.MessageId] = r
		default:
			return
		}
	}
}
