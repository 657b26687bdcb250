package natspub

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/reliar/reliar"
)

// PublishBatch sends every envelope asynchronously, then waits for each
// acknowledgement. It returns one result per envelope, in order. When ctx
// ends first, the envelopes still unacknowledged fail with ctx's error;
// the stream may still store them (duplicate window 4).
func (p *Publisher) PublishBatch(ctx context.Context, envs []*reliar.SerializedEnvelope) []error {
	res := make([]error, len(envs))
	if err := p.ready(ctx); err != nil {
		for i, env := range envs {
			res[i] = fmt.Errorf("natspub: publish %s: %w", env.ID, err)
		}
		return res
	}
	futures := make([]jetstream.PubAckFuture, len(envs))
	for i, env := range envs {
		msg, err := p.message(env)
		if err != nil {
			res[i] = reliar.Permanent(fmt.Errorf("natspub: publish %s: %w", env.ID, err))
			continue
		}
		if futures[i], err = p.js.PublishMsgAsync(msg); err != nil {
			res[i] = fmt.Errorf("natspub: publish %s: %w", env.ID, classify(err))
		}
	}
	for i, f := range futures {
		if f == nil {
			continue
		}
		var err error
		select {
		case <-f.Ok():
		case err = <-f.Err():
			err = classify(err)
		case <-ctx.Done():
			err = ctx.Err()
		}
		if err != nil {
			res[i] = fmt.Errorf("natspub: publish %s: %w", envs[i].ID, err)
		}
	}
	return res
}
