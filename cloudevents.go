package reliar

import (
	"cmp"
	"fmt"
	"iter"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// CloudEvents binary-mode header names shared by every publisher. Each
// attribute travels as a "ce-" header; the payload is the message body as it
// is, and its media type travels as "content-type".
const (
	HeaderID             = "ce-id"
	HeaderType           = "ce-type"
	HeaderSource         = "ce-source"
	HeaderSpecVersion    = "ce-specversion"
	HeaderTime           = "ce-time"
	HeaderContentType    = "content-type"
	HeaderVersion        = "ce-messageversion"
	HeaderCorrelationID  = "ce-correlationid"
	HeaderConversationID = "ce-conversationid"
	HeaderCausationID    = "ce-causationid"
	HeaderRequestID      = "ce-requestid"
	HeaderTenantID       = "ce-tenantid"
	HeaderDestination    = "ce-destination"
	HeaderReplyTo        = "ce-replyto"
	HeaderExpiresAt      = "ce-expiresat"
	HeaderDedupID        = "ce-deduplicationid"
	HeaderPartitionKey   = "ce-partitionkey"
	HeaderSequence       = "ce-sequence"
	HeaderTraceparent    = "traceparent"
	HeaderTracestate     = "tracestate"

	// DefaultSource is the ce-source of a message whose metadata names none.
	DefaultSource = "reliar"
	specVersion   = "1.0"
)

// CloudEventHeaders maps an envelope to CloudEvents binary-mode headers: its
// attributes under "ce-" names, its trace context as "traceparent" and
// "tracestate", and its user headers as they are. A user header whose name
// starts with "ce-" or equals a reserved name is overwritten by the
// envelope's own attribute. Every publisher uses this one mapping, as a map
// here or pair by pair from [CloudEventHeadersSeq].
func CloudEventHeaders(e *SerializedEnvelope) map[string]string {
	h := make(map[string]string, len(e.Headers)+12)
	for k, v := range CloudEventHeadersSeq(e) {
		h[k] = v
	}
	return h
}

// CloudEventHeadersSeq yields the headers of [CloudEventHeaders] one pair at
// a time, each name once: first the user headers that no attribute
// overwrites, in no particular order, then the attributes. Publishers that
// build their broker's own header structure range over it instead of
// building the intermediate map, once per message.
func CloudEventHeadersSeq(e *SerializedEnvelope) iter.Seq2[string, string] {
	return func(yield func(name, value string) bool) {
		var buf [maxAttributes]headerPair
		attrs := cloudEventAttributes(buf[:0], e)
	user:
		for k, v := range e.Headers {
			for _, a := range attrs {
				if a.name == k {
					continue user
				}
			}
			if !yield(k, v) {
				return
			}
		}
		for _, a := range attrs {
			if !yield(a.name, a.value) {
				return
			}
		}
	}
}

// headerPair is one header of an envelope.
type headerPair struct{ name, value string }

// maxAttributes is the number of header names cloudEventAttributes can set.
const maxAttributes = 20

// cloudEventAttributes appends the envelope's own headers to attrs: the
// attributes that are set, each once.
func cloudEventAttributes(attrs []headerPair, e *SerializedEnvelope) []headerPair {
	m := &e.Metadata
	put := func(k, v string) { attrs = append(attrs, headerPair{k, v}) }
	set := func(k, v string) {
		if v != "" {
			put(k, v)
		}
	}
	put(HeaderID, e.ID.String())
	put(HeaderType, e.MessageType)
	put(HeaderSpecVersion, specVersion)
	put(HeaderSource, cmp.Or(m.Routing.Source, DefaultSource))
	t := e.CreatedAt
	if m.Delivery.SentAt != nil {
		t = *m.Delivery.SentAt
	}
	if !t.IsZero() {
		put(HeaderTime, t.UTC().Format(time.RFC3339Nano))
	}
	set(HeaderContentType, e.ContentType)
	put(HeaderVersion, strconv.Itoa(int(e.MessageVersion)))
	set(HeaderCorrelationID, m.Correlation.CorrelationID)
	if c := m.Correlation.ConversationID; c != uuid.Nil {
		set(HeaderConversationID, c.String())
	}
	if c := m.Correlation.CausationID; c != nil {
		set(HeaderCausationID, c.String())
	}
	if r := m.Correlation.RequestID; r != nil {
		set(HeaderRequestID, r.String())
	}
	set(HeaderTenantID, m.TenantID)
	set(HeaderDestination, m.Routing.Destination)
	set(HeaderReplyTo, m.Routing.ReplyTo)
	if x := m.Delivery.ExpiresAt; x != nil {
		set(HeaderExpiresAt, x.UTC().Format(time.RFC3339Nano))
	}
	set(HeaderDedupID, m.Delivery.DeduplicationID)
	set(HeaderPartitionKey, e.OrderingKey)
	if e.Sequence != 0 {
		set(HeaderSequence, strconv.FormatInt(e.Sequence, 10))
	}
	set(HeaderTraceparent, m.Trace.Traceparent)
	set(HeaderTracestate, m.Trace.Tracestate)
	return attrs
}

// EnvelopeFromHeaders is the reverse of [CloudEventHeaders], for consumers
// written in Go: it rebuilds an envelope from received headers and payload.
// Header names are matched case-insensitively. Headers that are not
// CloudEvents attributes come back as user headers. It fails when ce-id is
// missing or any id or time attribute does not parse.
func EnvelopeFromHeaders(headers map[string]string, payload []byte) (*SerializedEnvelope, error) {
	h := make(map[string]string, len(headers))
	for k, v := range headers {
		h[strings.ToLower(k)] = v
	}
	e := &SerializedEnvelope{Payload: payload, Headers: map[string]string{}}
	var err error
	if e.ID, err = uuid.Parse(h[HeaderID]); err != nil {
		return nil, fmt.Errorf("reliar: header %s: %w", HeaderID, err)
	}
	e.MessageType = h[HeaderType]
	e.ContentType = h[HeaderContentType]
	e.OrderingKey = h[HeaderPartitionKey]
	e.MessageVersion = 1
	if v := h[HeaderVersion]; v != "" {
		n, err := strconv.ParseUint(v, 10, 16)
		if err != nil {
			return nil, fmt.Errorf("reliar: header %s: %w", HeaderVersion, err)
		}
		e.MessageVersion = uint16(n)
	}
	if v := h[HeaderSequence]; v != "" {
		if e.Sequence, err = strconv.ParseInt(v, 10, 64); err != nil {
			return nil, fmt.Errorf("reliar: header %s: %w", HeaderSequence, err)
		}
	}
	m := &e.Metadata
	if src := h[HeaderSource]; src != DefaultSource {
		m.Routing.Source = src
	}
	m.Routing.Destination = h[HeaderDestination]
	m.Routing.ReplyTo = h[HeaderReplyTo]
	m.Correlation.CorrelationID = h[HeaderCorrelationID]
	m.TenantID = h[HeaderTenantID]
	m.Delivery.DeduplicationID = h[HeaderDedupID]
	m.Delivery.ContentType = e.ContentType
	m.Trace = Trace{Traceparent: h[HeaderTraceparent], Tracestate: h[HeaderTracestate]}
	m.Correlation.ConversationID = e.ID
	for name, dst := range map[string]*uuid.UUID{HeaderConversationID: &m.Correlation.ConversationID} {
		if v := h[name]; v != "" {
			if *dst, err = uuid.Parse(v); err != nil {
				return nil, fmt.Errorf("reliar: header %s: %w", name, err)
			}
		}
	}
	for name, dst := range map[string]**uuid.UUID{HeaderCausationID: &m.Correlation.CausationID, HeaderRequestID: &m.Correlation.RequestID} {
		if v := h[name]; v != "" {
			id, err := uuid.Parse(v)
			if err != nil {
				return nil, fmt.Errorf("reliar: header %s: %w", name, err)
			}
			*dst = &id
		}
	}
	for name, dst := range map[string]**time.Time{HeaderTime: &m.Delivery.SentAt, HeaderExpiresAt: &m.Delivery.ExpiresAt} {
		if v := h[name]; v != "" {
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				return nil, fmt.Errorf("reliar: header %s: %w", name, err)
			}
			*dst = &t
		}
	}
	if m.Delivery.SentAt != nil {
		e.CreatedAt = *m.Delivery.SentAt
	}
	for k, v := range h {
		if !isReserved(k) {
			e.Headers[k] = v
		}
	}
	return e, nil
}

var reserved = map[string]bool{HeaderContentType: true, HeaderTraceparent: true, HeaderTracestate: true}

func isReserved(name string) bool {
	return strings.HasPrefix(name, "ce-") || reserved[name]
}

// CloneHeaders returns a copy of h, or nil when h is empty.
func CloneHeaders(h map[string]string) map[string]string {
	if len(h) == 0 {
		return nil
	}
	return maps.Clone(h)
}
