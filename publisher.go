package reliar

import (
	"context"
	"time"
)

// Publisher delivers one message to a broker. It returns nil only after the
// broker durably accepted the message. An error classified permanent (see
// [Permanent]) dead-letters the message at once; any other error is retried.
// Publish must honour ctx: the dispatcher bounds every call with its publish
// timeout, and a call still running shortly after it is given up — resolved
// as a transient failure, its late result ignored — while its goroutine runs
// on until Publish returns (outbox.Health.StuckCalls counts those).
type Publisher interface {
	Publish(ctx context.Context, env *SerializedEnvelope) error
}

// BatchPublisher is optionally implemented by a Publisher that can deliver
// several messages in one call. PublishBatch returns exactly one result per
// envelope, in order; a nil result means that envelope was durably accepted.
//
// A result slice of any other length — nil, or one short — cannot say which
// envelopes were accepted, so the dispatcher fails every row of the batch
// transiently (taking it for success could lose messages): the batch is
// retried, and nothing is published until the publisher is fixed. The
// dispatcher logs this at error once per publisher and counts it
// (Metrics.InvalidBatchResults). Build the slice with
// make([]error, len(envs)) and fill it.
type BatchPublisher interface {
	Publisher
	PublishBatch(ctx context.Context, envs []*SerializedEnvelope) []error
}

// PublisherFunc adapts a function to the [Publisher] interface.
type PublisherFunc func(ctx context.Context, env *SerializedEnvelope) error

// Publish calls f(ctx, env).
func (f PublisherFunc) Publish(ctx context.Context, env *SerializedEnvelope) error {
	return f(ctx, env)
}

// DedupWindower is optionally implemented by a Publisher whose broker drops
// a second message with the same id within a window (JetStream's stream
// Duplicates window, for example). DedupWindow returns that window, or zero
// when the broker does not deduplicate. The dispatcher uses it to count
// republications that the broker can no longer recognise as duplicates.
type DedupWindower interface {
	DedupWindow() time.Duration
}
