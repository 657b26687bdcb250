package reliar

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// EnvelopeFromHeaders is the reverse of [CloudEventHeaders], for consumers
// written in Go: it rebuilds an envelope from headers named as the HTTP and
// NATS bindings name them, and the payload. Header names are matched
// case-insensitively and come back in lower case. Headers that are not
// CloudEvents attributes come back as user headers. It fails when ce-id is
// missing or any id or time attribute does not parse.
func EnvelopeFromHeaders(headers map[string]string, payload []byte) (*SerializedEnvelope, error) {
	attrs := make(map[string]string, 24)
	user := make(map[string]string, len(headers))
	for k, v := range headers {
		k = strings.ToLower(k)
		switch {
		case k == HeaderContentType:
			attrs[AttrDataContentType] = v
		case strings.HasPrefix(k, "ce-"):
			attrs[k[len("ce-"):]] = v
		default:
			user[k] = v
		}
	}
	return EnvelopeFromAttributes(attrs, user, payload)
}

// EnvelopeFromAttributes rebuilds an envelope from its CloudEvents
// attributes by bare, lower-case name ([AttrID], …, [AttrDataContentType]),
// its user headers and its payload: the shared half of every consumer
// helper, once the helper has read its binding's names. A user header named
// traceparent or tracestate (the plain W3C headers) gives the trace context
// when the attributes carry none, and is not a user header. It fails when
// the id is missing or any id or time attribute does not parse.
func EnvelopeFromAttributes(attrs, headers map[string]string, payload []byte) (*SerializedEnvelope, error) {
	e := &SerializedEnvelope{Payload: payload, Headers: make(map[string]string, len(headers))}
	var err error
	if e.ID, err = uuid.Parse(attrs[AttrID]); err != nil {
		return nil, fmt.Errorf("reliar: attribute %s: %w", AttrID, err)
	}
	e.MessageType = attrs[AttrType]
	e.ContentType = attrs[AttrDataContentType]
	e.OrderingKey = attrs[AttrPartitionKey]
	e.MessageVersion = 1
	if v := attrs[AttrVersion]; v != "" {
		n, err := strconv.ParseUint(v, 10, 16)
		if err != nil {
			return nil, fmt.Errorf("reliar: attribute %s: %w", AttrVersion, err)
		}
		e.MessageVersion = uint16(n)
	}
	if v := attrs[AttrSequence]; v != "" {
		if e.Sequence, err = strconv.ParseInt(v, 10, 64); err != nil {
			return nil, fmt.Errorf("reliar: attribute %s: %w", AttrSequence, err)
		}
	}
	m := &e.Metadata
	if src := attrs[AttrSource]; src != DefaultSource {
		m.Routing.Source = src
	}
	m.Routing.Destination = attrs[AttrDestination]
	m.Routing.ReplyTo = attrs[AttrReplyTo]
	m.Correlation.CorrelationID = attrs[AttrCorrelationID]
	m.TenantID = attrs[AttrTenantID]
	m.Delivery.DeduplicationID = attrs[AttrDedupID]
	m.Delivery.ContentType = e.ContentType
	m.Trace = Trace{Traceparent: attrs[AttrTraceparent], Tracestate: attrs[AttrTracestate]}
	if m.Trace == (Trace{}) {
		m.Trace = Trace{Traceparent: headers[HeaderTraceparent], Tracestate: headers[HeaderTracestate]}
	}
	m.Correlation.ConversationID = e.ID
	if v := attrs[AttrConversationID]; v != "" {
		if m.Correlation.ConversationID, err = uuid.Parse(v); err != nil {
			return nil, fmt.Errorf("reliar: attribute %s: %w", AttrConversationID, err)
		}
	}
	for _, a := range [...]struct {
		name string
		dst  **uuid.UUID
	}{{AttrCausationID, &m.Correlation.CausationID}, {AttrRequestID, &m.Correlation.RequestID}} {
		if v := attrs[a.name]; v != "" {
			id, err := uuid.Parse(v)
			if err != nil {
				return nil, fmt.Errorf("reliar: attribute %s: %w", a.name, err)
			}
			*a.dst = &id
		}
	}
	for _, a := range [...]struct {
		name string
		dst  **time.Time
	}{{AttrTime, &m.Delivery.SentAt}, {AttrExpiresAt, &m.Delivery.ExpiresAt}} {
		if v := attrs[a.name]; v != "" {
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				return nil, fmt.Errorf("reliar: attribute %s: %w", a.name, err)
			}
			*a.dst = &t
		}
	}
	if m.Delivery.SentAt != nil {
		e.CreatedAt = *m.Delivery.SentAt
	}
	for k, v := range headers {
		if k != HeaderTraceparent && k != HeaderTracestate {
			e.Headers[k] = v
		}
	}
	return e, nil
}
