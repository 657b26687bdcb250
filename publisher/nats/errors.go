package nats

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
	ErrInvalidOption = errors.New("nats: invalid option")
	// ErrInvalidSubject reports a message whose subject is not a valid
	// NATS publish subject (empty tokens, whitespace, wildcards). It is a
	// permanent failure.
	ErrInvalidSubject = errors.New("nats: invalid subject")
	// ErrInvalidHeader reports a header NATS cannot carry, or a user header
	// in the reserved "Nats-" namespace. It is a permanent failure.
	ErrInvalidHeader = errors.New("nats: invalid header")
	// ErrNoStream reports a subject no stream listens on. It is permanent
	// unless the publisher was built with WithNoStreamTransient.
	ErrNoStream = errors.New("nats: no stream for subject")
	// ErrClosed is returned by Publish after Close. It is transient: the
	// message stays in the outbox for the next publisher.
	ErrClosed = errors.New("nats: publisher closed")
)

// classify wraps a publish error with its failure class, keeping the
// original error (and any context error) visible to errors.Is and
// errors.As.
func classify(err error, noStreamTransient bool) error {
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case errors.Is(err, jetstream.ErrNoStreamResponse), errors.Is(err, nats.ErrNoResponders):
		err = fmt.Errorf("%w: %w", ErrNoStream, err)
		if noStreamTransient {
			return err
		}
		return reliar.Permanent(err)
	case errors.Is(err, nats.ErrMaxPayload), errors.Is(err, nats.ErrBadSubject), errors.Is(err, nats.ErrBadHeaderMsg):
		return reliar.Permanent(err)
	}
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) && apiErr.Code >= 400 && apiErr.Code < 500 &&
		apiErr.Code != 408 && apiErr.Code != 429 {
		// The server answered and refused this message (too large, a
		// failed expectation): the same publish fails the same way.
		return reliar.Permanent(err)
	}
	return err
}
