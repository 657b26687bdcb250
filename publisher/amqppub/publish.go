package amqppub

import (
	"context"
	"errors"
	"fmt"

	amqp091 "github.com/rabbitmq/amqp091-go"
	"github.com/reliar/reliar"
)

// Publish publishes env, mandatory and persistent, and waits for the
// broker's confirmation. An ack means the broker routed the message to
// every bound queue and, for durable queues, wrote it to disk; a
// basic.return before the ack (no queue bound) fails permanently with a
// [*ReturnError]; a nack fails transiently.
func (p *Publisher) Publish(ctx context.Context, env *reliar.SerializedEnvelope) error {
	return p.PublishBatch(ctx, []*reliar.SerializedEnvelope{env})[0]
}

// PublishBatch publishes every envelope on one channel, then waits for
// all their confirmations. It returns one result per envelope, in order;
// an envelope still unconfirmed when ctx ends gets ctx's error (its outcome
// is unknown).
func (p *Publisher) PublishBatch(ctx context.Context, envs []*reliar.SerializedEnvelope) []error {
	results := make([]error, len(envs))
	if len(envs) == 0 {
		return results
	}
	if err := ctx.Err(); err != nil {
		return fill(results, envs, func(env *reliar.SerializedEnvelope) error {
			return fmt.Errorf("amqppub: publish %s: %w", env.ID, err)
		})
	}
	c, err := p.acquire(ctx)
	if err != nil {
		return fill(results, envs, func(env *reliar.SerializedEnvelope) error {
			return fmt.Errorf("amqppub: publish %s: %w", env.ID, err)
		})
	}
	defer p.put(c)
	for start := 0; start < len(envs); start += returnWindow {
		end := min(start+returnWindow, len(envs))
		p.publishWindow(ctx, c, envs[start:end], results[start:end])
	}
	return results
}

// fill sets every result to f(env) and returns results.
func fill(results []error, envs []*reliar.SerializedEnvelope, f func(*reliar.SerializedEnvelope) error) []error {
	for i, env := range envs {
		results[i] = f(env)
	}
	return results
}

// inflight is one message published and awaiting its confirmation.
type inflight struct {
	index int
	env   *reliar.SerializedEnvelope
	dc    *amqp091.DeferredConfirmation
}

// publishWindow publishes at most returnWindow envelopes on c, then
// waits for their confirmations, writing one result per envelope.
func (p *Publisher) publishWindow(ctx context.Context, c *channel, envs []*reliar.SerializedEnvelope, results []error) {
	var pending []inflight
	for i, env := range envs {
		if env == nil {
			results[i] = reliar.Permanent(errors.New("amqppub: nil envelope"))
			continue
		}
		key, msg, err := p.message(env)
		if err != nil {
			results[i] = err
			continue
		}
		if limit := p.maxSize.Load(); limit > 0 && int64(len(msg.Body)) > limit {
			results[i] = tooLarge(env, limit, nil)
			continue
		}
		if c.closed(ctx) {
			results[i] = p.failed(env, c.closeErr)
			continue
		}
		dc, err := c.ch.PublishWithDeferredConfirmWithContext(ctx, p.opts.exchange, key, true, false, msg)
		if err != nil {
			if ctx.Err() == nil && c.closed(ctx) {
				err = c.closeErr
			}
			results[i] = p.failed(env, err)
			continue
		}
		pending = append(pending, inflight{index: i, env: env, dc: dc})
	}
	for n, f := range pending {
		select {
		case <-f.dc.Done():
			results[f.index] = p.outcome(ctx, c, f)
		case <-ctx.Done():
			// The rest are abandoned unconfirmed: their outcome is unknown
			// and c may still receive their confirmations, so it is not
			// reused.
			c.dirty = true
			for _, g := range pending[n:] {
				select {
				case <-g.dc.Done():
					results[g.index] = p.outcome(ctx, c, g)
				default:
					results[g.index] = fmt.Errorf("amqppub: publish %s: outcome unknown: %w", g.env.ID, ctx.Err())
				}
			}
			return
		}
	}
}

// outcome turns the confirmation of f into its result.
func (p *Publisher) outcome(ctx context.Context, c *channel, f inflight) error {
	id := f.env.ID.String()
	if f.dc.Acked() {
		// A return precedes its message's ack on the wire, and amqp091
		// delivers it before it resolves the ack.
		c.drainReturns()
		r, returned := c.returned[id]
		if !returned {
			return nil
		}
		delete(c.returned, id)
		return &ReturnError{ID: f.env.ID, ReplyCode: r.ReplyCode, ReplyText: r.ReplyText, Exchange: r.Exchange, RoutingKey: r.RoutingKey}
	}
	if c.closed(ctx) {
		// The broker closed the channel (or the connection) before it
		// confirmed the message; amqp091 nacks what was pending.
		return p.failed(f.env, c.closeErr)
	}
	return fmt.Errorf("amqppub: publish %s: %w", f.env.ID, ErrNacked)
}

// failed wraps err, why env could not be published, with the message id
// and classifies it. A channel closed by PRECONDITION_FAILED for a message
// over max_message_size fails the messages over that size permanently and
// the others, which only shared the channel, transiently; the publisher
// keeps the limit to refuse larger messages before sending them.
func (p *Publisher) failed(env *reliar.SerializedEnvelope, err error) error {
	if limit, ok := maxMessageSize(err); ok {
		p.maxSize.Store(limit)
		if int64(len(env.Payload)) > limit {
			return tooLarge(env, limit, err)
		}
		return fmt.Errorf("amqppub: publish %s: the channel closed for another, larger message: %w", env.ID, err)
	}
	return classify(fmt.Errorf("amqppub: publish %s: %w", env.ID, err))
}

// tooLarge is the permanent error of env over the broker's limit; cause is
// the broker's answer, when there was one.
func tooLarge(env *reliar.SerializedEnvelope, limit int64, cause error) error {
	err := fmt.Errorf("%w: message %s has %d bytes, and max_message_size is %d", ErrTooLarge, env.ID, len(env.Payload), limit)
	if cause != nil {
		err = fmt.Errorf("%w (%w)", err, cause)
	}
	return reliar.Permanent(err)
}
