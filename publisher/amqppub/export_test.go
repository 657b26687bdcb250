package amqppub

import "context"

// HoldChannel takes a channel of the pool until release is called.
func (p *Publisher) HoldChannel(ctx context.Context) (release func(), err error) {
	c, err := p.acquire(ctx)
	if err != nil {
		return nil, err
	}
	return func() { p.put(c) }, nil
}

// Classify exposes classify to the tests.
var Classify = classify
