package natspub

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/reliar/reliar"
)

var (
	// ErrInvalidOption is wrapped by every error of an Option.
	ErrInvalidOption = errors.New("natspub: invalid option")
	// ErrInvalidSubject reports a message whose subject is not a valid
	// NATS publish subject (empty tokens, whitespace, wildcards). It is a
	// permanent failure.
	ErrInvalidSubject = errors.New("natspub: invalid subject")
	// ErrInvalidHeader reports a header NATS cannot carry, or a user header
	// in the reserved "Nats-" namespace. It is a permanent failure.
	ErrInvalidHeader = errors.New("natspub: invalid header")
	// ErrNoStream reports a subject no stream listens on. It is
	// transient: every message for the subject shares it, and the rows
	// wait until an operator creates the stream.
	ErrNoStream = errors.New("natspub: no stream for subject")
	// ErrTooLarge reports a message whose headers and data exceed the
	// server's max_payload. It is a permanent failure.
	ErrTooLarge = errors.New("natspub: message over the server's max_payload")
	// ErrClosed is returned by Publish after Close. It is transient: the
	// message stays in the outbox for the next publisher.
	ErrClosed = errors.New("natspub: publisher closed")
)

// classify wraps a publish error with its failure class, keeping the
// original error (and any context error) visible to errors.Is and
// errors.As.
//
// The rule: a condition of this one message is permanent (over
// max_payload or the stream's maximum message size, an invalid subject or
// header); a condition every message shares is transient (no stream,
// missing permissions, refused credentials, an unavailable or overloaded
// JetStream), so that it feeds the dispatcher's breaker and dead-letters
// nothing.
func classify(err error) error {
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case errors.Is(err, jetstream.ErrNoStreamResponse), errors.Is(err, nats.ErrNoResponders),
		errors.Is(err, jetstream.ErrStreamNotFound):
		return fmt.Errorf("%w: %w", ErrNoStream, err)
	case errors.Is(err, nats.ErrMaxPayload), errors.Is(err, nats.ErrBadSubject), errors.Is(err, nats.ErrBadHeaderMsg):
		return reliar.Permanent(err)
	case errors.Is(err, nats.ErrPermissionViolation), errors.Is(err, nats.ErrAuthorization),
		errors.Is(err, nats.ErrAuthExpired), errors.Is(err, nats.ErrAuthRevoked):
		return err
	}
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) && apiErr.Code == 400 {
		// The stream answered and refused this message (over its maximum
		// message size, a failed expectation): the same publish fails the
		// same way.
		return reliar.Permanent(err)
	}
	return err
}
