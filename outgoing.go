package reliar

import (
	"fmt"
	"time"

	"github.com/google/uuid"
)

// Outgoing is a type-erased envelope: what a store's Enqueue takes, so that one
// call can carry messages of different types. Build one with [Msg] or [NewMsg].
type Outgoing struct {
	ID          MessageID
	Body        Message
	Metadata    Metadata
	Headers     map[string]string
	OrderingKey string
	AvailableAt time.Time
}

// Msg erases the type of an envelope so that it can be enqueued.
func Msg[T Message](e Envelope[T]) Outgoing {
	return Outgoing{
		ID:          e.ID,
		Body:        e.Body,
		Metadata:    e.Metadata,
		Headers:     e.Headers,
		OrderingKey: e.OrderingKey,
		AvailableAt: e.AvailableAt,
	}
}

// NewMsg wraps a body in an Outgoing with a fresh UUIDv7 id and empty metadata.
func NewMsg(body Message) Outgoing {
	return Outgoing{ID: NewMessageID(), Body: body}
}

// Prepared returns a copy of o ready to be stored: a fresh id when o has none,
// the conversation id defaulted to the message id, and SentAt set to now when
// unset. It fails when the body is nil or its message type is empty, and
// with an error wrapping [ErrReservedHeader] when a user header lies in a
// CloudEvents binding's namespace ([IsReservedHeader]): the envelope's own
// attributes travel there.
func (o Outgoing) Prepared(now time.Time) (Outgoing, error) {
	if o.Body == nil {
		return o, fmt.Errorf("reliar: message %s has no body", o.ID)
	}
	if o.Body.MessageType() == "" {
		return o, fmt.Errorf("reliar: message %s (%T) has an empty message type", o.ID, o.Body)
	}
	for name := range o.Headers {
		if IsReservedHeader(name) {
			return o, fmt.Errorf("%w: message %s: header %q: choose a name outside ce-, ce_ and cloudEvents:", ErrReservedHeader, o.ID, name)
		}
	}
	if o.ID == uuid.Nil {
		o.ID = NewMessageID()
	}
	if o.Metadata.Correlation.ConversationID == uuid.Nil {
		o.Metadata.Correlation.ConversationID = o.ID
	}
	if o.Metadata.Delivery.SentAt == nil {
		t := now.UTC()
		o.Metadata.Delivery.SentAt = &t
	}
	return o, nil
}
