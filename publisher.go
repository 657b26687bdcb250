package reliar

import (
	"context"
	"time"
)

// Publisher delivers one message to a broker. It returns nil only after the
// broker durably accepted the message. An error classified permanent (see
// [Permanent]) dead-letters the message at once; any other error is retried.
// Publish must honour ctx: the dispatcher bounds every call with its publish
// timeout.
type Publisher interface {
	Publish(ctx context.Context, env *SerializedEnvelope) error
}

// BatchPublisher is optionally implemented by a Publisher that can deliver
// several messages in one call. PublishBatch returns exactly one result per
// envelope, in order; a nil result means that envelope was durably accepted.
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
