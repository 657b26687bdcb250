package redis

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"
	"github.com/reliar/reliar"
)

var (
	// ErrInvalidOption is wrapped by every error of an Option.
	ErrInvalidOption = errors.New("redis: invalid option")
	// ErrReservedField reports a user header named like the payload field.
	// It is a permanent failure.
	ErrReservedField = errors.New("redis: user header uses the reserved field name " + PayloadField)
	// ErrInvalidStream reports an empty stream name from the stream func.
	// It is a permanent failure.
	ErrInvalidStream = errors.New("redis: empty stream name")
	// ErrNoPayload is returned by Decode for an entry without a payload
	// field.
	ErrNoPayload = errors.New("redis: entry has no " + PayloadField + " field")
)

// classify wraps a publish error with its failure class, keeping the
// original error visible to errors.Is and errors.As.
func classify(err error) error {
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case redis.HasErrorPrefix(err, "WRONGTYPE"), redis.IsPermissionError(err), redis.IsAuthError(err):
		// The key, the ACL or the credentials are wrong: the same command
		// fails the same way until someone changes the configuration.
		return reliar.Permanent(err)
	}
	return err
}
