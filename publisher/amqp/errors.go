package amqp

import (
	"errors"
	"fmt"

	amqp091 "github.com/rabbitmq/amqp091-go"
	"github.com/reliar/reliar"
)

var (
	// ErrClosed is returned by Publish and PublishBatch after Close. It is
	// transient: another process may publish the message.
	ErrClosed = errors.New("amqp: publisher closed")
	// ErrNotConnected is returned, transient, while the connection is lost
	// and the publisher reconnects.
	ErrNotConnected = errors.New("amqp: not connected to the broker")
	// ErrNacked is returned, transient, when the broker negatively
	// acknowledged a message (an internal error, or a queue refusing
	// publishes because it is full).
	ErrNacked = errors.New("amqp: message nacked by the broker")
	// ErrUnroutable is matched (with errors.Is) by a *ReturnError.
	ErrUnroutable = errors.New("amqp: message returned unroutable")
	// ErrInvalidMessage is wrapped by the permanent error of a message that
	// cannot be expressed in AMQP (a field over 255 bytes).
	ErrInvalidMessage = errors.New("amqp: invalid message")
)

// ReturnError reports a message the broker returned because it was
// published mandatory and no queue was bound to receive it (NO_ROUTE). It
// is permanent: the same message is routed the same way again.
type ReturnError struct {
	ID         reliar.MessageID
	ReplyCode  uint16
	ReplyText  string
	Exchange   string
	RoutingKey string
}

func (e *ReturnError) Error() string {
	return fmt.Sprintf("amqp: message %s returned by exchange %q for routing key %q: %d %s",
		e.ID, e.Exchange, e.RoutingKey, e.ReplyCode, e.ReplyText)
}

// Is reports whether target is ErrUnroutable.
func (e *ReturnError) Is(target error) bool { return target == ErrUnroutable }

// FailureKind is always permanent.
func (e *ReturnError) FailureKind() reliar.FailureKind { return reliar.FailurePermanent }

// permanentCodes are the AMQP reply codes that fail a message the same way
// however often it is retried: NOT_FOUND (no such exchange),
// ACCESS_REFUSED (no write permission on it) and PRECONDITION_FAILED (a
// message over the broker's max_message_size).
var permanentCodes = map[int]bool{
	amqp091.NotFound:           true,
	amqp091.AccessRefused:      true,
	amqp091.PreconditionFailed: true,
}

// classify marks err permanent when it carries an AMQP error with one of
// permanentCodes, and leaves it transient otherwise (closed channels and
// connections, timeouts, nacks).
func classify(err error) error {
	if err == nil || reliar.IsPermanent(err) {
		return err
	}
	var ae *amqp091.Error
	if errors.As(err, &ae) && permanentCodes[ae.Code] {
		return reliar.Permanent(err)
	}
	return err
}
