package reliarrun

import (
	"context"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/bench/internal/sink"
)

// Publisher hands every message to a sink and does nothing else.
type Publisher struct {
	// Sink receives the messages.
	Sink *sink.Sink
}

// Publish records env's arrival; a payload the sink cannot read is a
// permanent failure.
func (p Publisher) Publish(_ context.Context, env *reliar.SerializedEnvelope) error {
	if err := p.Sink.DeliverPayload(env.Payload); err != nil {
		return reliar.Permanent(err)
	}
	return nil
}

// BatchPublisher is Publisher that also takes whole batches.
type BatchPublisher struct {
	Publisher
}

// PublishBatch records the arrival of every envelope, one result each.
func (p BatchPublisher) PublishBatch(ctx context.Context, envs []*reliar.SerializedEnvelope) []error {
	errs := make([]error, len(envs))
	for i, env := range envs {
		errs[i] = p.Publish(ctx, env)
	}
	return errs
}
