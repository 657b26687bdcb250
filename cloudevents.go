package reliar

import (
	"cmp"
	"iter"
	"maps"
	"strconv"
	"time"

	"github.com/google/uuid"
)

// CloudEvents attribute names, without any binding's prefix. Every
// publisher sends the envelope as these context attributes and extensions,
// each under its protocol binding's name for it: "ce-" headers on HTTP and
// NATS ([HTTPHeaderName]), "ce_" headers on Kafka, "cloudEvents:"
// application properties on AMQP. The data content type travels in the
// protocol's own content-type field instead.
const (
	AttrID              = "id"
	AttrType            = "type"
	AttrSource          = "source"
	AttrSpecVersion     = "specversion"
	AttrTime            = "time"
	AttrDataContentType = "datacontenttype"
	// Extensions: the envelope's own metadata.
	AttrVersion        = "messageversion"
	AttrCorrelationID  = "correlationid"
	AttrConversationID = "conversationid"
	AttrCausationID    = "causationid"
	AttrRequestID      = "requestid"
	AttrTenantID       = "tenantid"
	AttrDestination    = "destination"
	AttrReplyTo        = "replyto"
	AttrExpiresAt      = "expiresat"
	AttrDedupID        = "deduplicationid"
	AttrPartitionKey   = "partitionkey"
	AttrSequence       = "sequence"
	// The Distributed Tracing extension. The same values also travel as
	// the plain W3C "traceparent" and "tracestate" headers that
	// OpenTelemetry's propagators read.
	AttrTraceparent = "traceparent"
	AttrTracestate  = "tracestate"
)

// The names of the HTTP and NATS bindings: each attribute travels as a "ce-"
// header, and the data content type as "content-type". Redis stream fields
// use the same names.
const (
	HeaderID             = "ce-" + AttrID
	HeaderType           = "ce-" + AttrType
	HeaderSource         = "ce-" + AttrSource
	HeaderSpecVersion    = "ce-" + AttrSpecVersion
	HeaderTime           = "ce-" + AttrTime
	HeaderContentType    = "content-type"
	HeaderVersion        = "ce-" + AttrVersion
	HeaderCorrelationID  = "ce-" + AttrCorrelationID
	HeaderConversationID = "ce-" + AttrConversationID
	HeaderCausationID    = "ce-" + AttrCausationID
	HeaderRequestID      = "ce-" + AttrRequestID
	HeaderTenantID       = "ce-" + AttrTenantID
	HeaderDestination    = "ce-" + AttrDestination
	HeaderReplyTo        = "ce-" + AttrReplyTo
	HeaderExpiresAt      = "ce-" + AttrExpiresAt
	HeaderDedupID        = "ce-" + AttrDedupID
	HeaderPartitionKey   = "ce-" + AttrPartitionKey
	HeaderSequence       = "ce-" + AttrSequence
	// HeaderTraceparent and HeaderTracestate are the W3C Trace Context
	// headers, sent with every message besides the CloudEvents extension.
	HeaderTraceparent = "traceparent"
	HeaderTracestate  = "tracestate"

	// DefaultSource is the ce-source of a message whose metadata names none.
	DefaultSource = "reliar"
	specVersion   = "1.0"
)

// HTTPHeaderName is the name of attribute (a bare name such as "id") in the
// HTTP and NATS bindings: "content-type" for the data content type, "ce-"
// and the name for every other attribute.
func HTTPHeaderName(attribute string) string {
	if attribute == AttrDataContentType {
		return HeaderContentType
	}
	return "ce-" + attribute
}

// CloudEventAttributes yields the envelope's CloudEvents context attributes
// and extensions by bare name ([AttrID], …), each once and only when set:
// id, type, specversion, source (defaulting to [DefaultSource]), time (the
// enqueue time), datacontenttype, then the extensions. A publisher names
// each under its binding's rule.
func CloudEventAttributes(e *SerializedEnvelope) iter.Seq2[string, string] {
	return func(yield func(name, value string) bool) {
		var buf [maxAttributes]headerPair
		for _, a := range cloudEventAttributes(buf[:0], e) {
			if !yield(a.name, a.value) {
				return
			}
		}
	}
}

// TraceHeaders yields the envelope's W3C Trace Context as the plain
// "traceparent" and "tracestate" headers, when set.
func TraceHeaders(e *SerializedEnvelope) iter.Seq2[string, string] {
	return func(yield func(name, value string) bool) {
		t := e.Metadata.Trace
		if t.Traceparent != "" && !yield(HeaderTraceparent, t.Traceparent) {
			return
		}
		if t.Tracestate != "" {
			yield(HeaderTracestate, t.Tracestate)
		}
	}
}

// CloudEventHeaders maps an envelope to the headers of the CloudEvents HTTP
// and NATS bindings in binary mode: its attributes under "ce-" names, its
// content type as "content-type", its trace context also as the plain
// "traceparent" and "tracestate", and its user headers as [UserHeaders]
// yields them. Header values are not percent-encoded here: the HTTP
// publisher does that. It is the map form of [CloudEventHeadersSeq].
func CloudEventHeaders(e *SerializedEnvelope) map[string]string {
	h := make(map[string]string, len(e.Headers)+24)
	for k, v := range CloudEventHeadersSeq(e) {
		h[k] = v
	}
	return h
}

// CloudEventHeadersSeq yields the headers of [CloudEventHeaders] one pair at
// a time, each name once: first the user headers, in no particular order,
// then the trace headers and the attributes. Publishers that build their
// broker's own header structure range over it instead of building the
// intermediate map, once per message.
func CloudEventHeadersSeq(e *SerializedEnvelope) iter.Seq2[string, string] {
	return func(yield func(name, value string) bool) {
		for k, v := range UserHeaders(e) {
			if !yield(k, v) {
				return
			}
		}
		for k, v := range TraceHeaders(e) {
			if !yield(k, v) {
				return
			}
		}
		var buf [maxAttributes]headerPair
		for _, a := range cloudEventAttributes(buf[:0], e) {
			if !yield(HTTPHeaderName(a.name), a.value) {
				return
			}
		}
	}
}

// headerPair is one attribute or header of an envelope.
type headerPair struct{ name, value string }

// maxAttributes is the number of attributes cloudEventAttributes can set.
const maxAttributes = 20

// cloudEventAttributes appends the envelope's attributes that are set to
// attrs, by bare name, each once.
func cloudEventAttributes(attrs []headerPair, e *SerializedEnvelope) []headerPair {
	m := &e.Metadata
	put := func(k, v string) { attrs = append(attrs, headerPair{k, v}) }
	set := func(k, v string) {
		if v != "" {
			put(k, v)
		}
	}
	put(AttrID, e.ID.String())
	put(AttrType, e.MessageType)
	put(AttrSpecVersion, specVersion)
	put(AttrSource, cmp.Or(m.Routing.Source, DefaultSource))
	t := e.CreatedAt
	if m.Delivery.SentAt != nil {
		t = *m.Delivery.SentAt
	}
	if !t.IsZero() {
		put(AttrTime, t.UTC().Format(time.RFC3339Nano))
	}
	set(AttrDataContentType, e.ContentType)
	put(AttrVersion, strconv.Itoa(int(e.MessageVersion)))
	set(AttrCorrelationID, m.Correlation.CorrelationID)
	if c := m.Correlation.ConversationID; c != uuid.Nil {
		set(AttrConversationID, c.String())
	}
	if c := m.Correlation.CausationID; c != nil {
		set(AttrCausationID, c.String())
	}
	if r := m.Correlation.RequestID; r != nil {
		set(AttrRequestID, r.String())
	}
	set(AttrTenantID, m.TenantID)
	set(AttrDestination, m.Routing.Destination)
	set(AttrReplyTo, m.Routing.ReplyTo)
	if x := m.Delivery.ExpiresAt; x != nil {
		set(AttrExpiresAt, x.UTC().Format(time.RFC3339Nano))
	}
	set(AttrDedupID, m.Delivery.DeduplicationID)
	set(AttrPartitionKey, e.OrderingKey)
	if e.Sequence != 0 {
		set(AttrSequence, strconv.FormatInt(e.Sequence, 10))
	}
	set(AttrTraceparent, m.Trace.Traceparent)
	set(AttrTracestate, m.Trace.Tracestate)
	return attrs
}

// CloneHeaders returns a copy of h, or nil when h is empty.
func CloneHeaders(h map[string]string) map[string]string {
	if len(h) == 0 {
		return nil
	}
	return maps.Clone(h)
}
