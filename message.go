package reliar

import (
	"time"

	"github.com/google/uuid"
)

// Message is implemented by every message body. MessageType names the
// message's schema, for example "orders.placed"; it becomes the row's
// message_type and the broker's routing attribute.
type Message interface {
	MessageType() string
}

// Versioned is optionally implemented by a message body to report its schema
// version. A body that does not implement it is version 1.
type Versioned interface {
	MessageVersion() uint16
}

// TypeOf returns a body's message type and version (1 unless it implements
// [Versioned]).
func TypeOf(body Message) (string, uint16) {
	version := uint16(1)
	if v, ok := body.(Versioned); ok {
		version = v.MessageVersion()
	}
	return body.MessageType(), version
}

// Envelope carries one message body with its metadata, headers and delivery
// options.
type Envelope[T Message] struct {
	// ID identifies the message. A zero ID is replaced by a fresh UUIDv7 at
	// enqueue.
	ID MessageID
	// Body is the message itself, serialized by the store's Serializer.
	Body T
	// Metadata is the message's correlation, trace, routing and delivery data.
	Metadata Metadata
	// Headers are user headers, passed to the broker as they are. Their
	// values are never logged.
	Headers map[string]string
	// OrderingKey groups messages that must be published in order when the
	// dispatcher runs with per-key ordering; empty means unordered. It is also
	// the broker's partition or routing key.
	OrderingKey string
	// AvailableAt delays delivery until that time; zero means now.
	AvailableAt time.Time
}

// Metadata is the data about a message that travels with it to the broker.
type Metadata struct {
	Correlation Correlation `json:"correlation"`
	Trace       Trace       `json:"trace"`
	Routing     Routing     `json:"routing"`
	Delivery    Delivery    `json:"delivery"`
	TenantID    string      `json:"tenant_id,omitempty"`
}

// Correlation ties a message to the conversation and request it belongs to.
type Correlation struct {
	// CorrelationID is a free-form id chosen by the application.
	CorrelationID string `json:"correlation_id,omitempty"`
	// ConversationID groups the messages of one conversation. It defaults to
	// the message's own id, also when a stored row has none.
	ConversationID uuid.UUID `json:"conversation_id"`
	// CausationID is the id of the message that caused this one, if any.
	CausationID *uuid.UUID `json:"causation_id,omitempty"`
	// RequestID is the id of the request that caused this message, if any.
	RequestID *uuid.UUID `json:"request_id,omitempty"`
}

// Trace is the W3C trace context captured at enqueue.
type Trace struct {
	Traceparent string `json:"traceparent,omitempty"`
	Tracestate  string `json:"tracestate,omitempty"`
}

// Routing says where a message comes from and where it should go.
type Routing struct {
	Source      string `json:"source,omitempty"`
	Destination string `json:"destination,omitempty"`
	ReplyTo     string `json:"reply_to,omitempty"`
}

// Delivery holds the delivery attributes of a message.
type Delivery struct {
	// SentAt is when the message was enqueued; the store sets it when nil.
	SentAt *time.Time `json:"sent_at,omitempty"`
	// ExpiresAt is when the message stops being worth delivering; an
	// undelivered message past it goes dead with reason "expired".
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	// DeduplicationID lets a consumer deduplicate by a business key rather
	// than by message id.
	DeduplicationID string `json:"deduplication_id,omitempty"`
	// ContentType is the payload's media type; the store's serializer sets it.
	ContentType string `json:"content_type,omitempty"`
}
