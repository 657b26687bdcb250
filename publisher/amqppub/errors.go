package amqppub

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"

	amqp091 "github.com/rabbitmq/amqp091-go"
	"github.com/reliar/reliar"
)

var (
	// ErrClosed is returned by Publish and PublishBatch after Close. It is
	// transient: another process may publish the message.
	ErrClosed = errors.New("amqppub: publisher closed")
	// ErrNotConnected is returned, transient, while the connection is lost
	// and the publisher reconnects.
	ErrNotConnected = errors.New("amqppub: not connected to the broker")
	// ErrNacked is returned, transient, when the broker negatively
	// acknowledged a message (an internal error, or a queue refusing
	// publishes because it is full).
	ErrNacked = errors.New("amqppub: message nacked by the broker")
	// ErrUnroutable is matched (with errors.Is) by a *ReturnError.
	ErrUnroutable = errors.New("amqppub: message returned unroutable")
	// ErrInvalidMessage is wrapped by the permanent error of a message that
	// cannot be expressed in AMQP (a field over 255 bytes).
	ErrInvalidMessage = errors.New("amqppub: invalid message")
	// ErrTooLarge is wrapped by the permanent error of a message over the
	// broker's max_message_size.
	ErrTooLarge = errors.New("amqppub: message over the broker's max_message_size")
)

// ReturnError reports a message the broker returned because it was
// published mandatory and no queue was bound to receive it (NO_ROUTE). It
// is transient: every message routed that way shares it, and the rows wait
// until an operator binds a queue (or an alternate exchange).
type ReturnError struct {
	ID         reliar.MessageID
	ReplyCode  uint16
	ReplyText  string
	Exchange   string
	RoutingKey string
}

func (e *ReturnError) Error() string {
	return fmt.Sprintf("amqppub: message %s returned by exchange %q for routing key %q: %d %s",
		e.ID, e.Exchange, e.RoutingKey, e.ReplyCode, e.ReplyText)
}

// Is reports whether target is ErrUnroutable.
func (e *ReturnError) Is(target error) bool { return target == ErrUnroutable }

// FailureKind is always transient.
func (e *ReturnError) FailureKind() reliar.FailureKind { return reliar.FailureTransient }

// classify keeps the class err already has. No AMQP reply code makes a
// message permanent by itself: NOT_FOUND (no such exchange), ACCESS_REFUSED
// (no write permission) and a refused login are shared by every message
// and an operator fixes them, and PRECONDITION_FAILED, which closes the
// channel, is attributed message by message (see tooLarge).
func classify(err error) error { return err }

// maxSizeText finds the limit in RabbitMQ's PRECONDITION_FAILED reply to
// a message over max_message_size: "message size N is larger than
// configured max size M".
var maxSizeText = regexp.MustCompile(`larger than configured max size (\d+)`)

// maxMessageSize returns the broker's max_message_size from the channel
// error of a message over it.
func maxMessageSize(err error) (int64, bool) {
	var ae *amqp091.Error
	if !errors.As(err, &ae) || ae.Code != amqp091.PreconditionFailed {
		return 0, false
	}
	m := maxSizeText.FindStringSubmatch(ae.Reason)
	if m == nil {
		return 0, false
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	return n, err == nil && n > 0
}
