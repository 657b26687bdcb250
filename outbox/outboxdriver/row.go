package outboxdriver

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/reliar/reliar"
)

// MetadataVersion is the version of the metadata document that this release
// writes. Rows with another version are undecodable.
const MetadataVersion = 1

// DefaultMaxPayloadBytes is the payload size stores refuse above, unless
// configured otherwise.
const DefaultMaxPayloadBytes = 1 << 20

// Row is the column set of an outbox row that SQL stores write at enqueue and
// read back at claim, with the encoding rules shared by every store: nullable
// columns are nil pointers, metadata is a JSON document at MetadataVersion,
// headers a JSON object of strings (nil when empty). Store authors use
// [NewRow] to encode and [Row.Envelope] to decode.
type Row struct {
	ID              reliar.MessageID
	Sequence        int64
	MessageType     string
	MessageVersion  int
	ContentType     string
	Payload         []byte
	CorrelationID   *string
	ConversationID  *uuid.UUID
	CausationID     *uuid.UUID
	RequestID       *uuid.UUID
	TenantID        *string
	ExpiresAt       *time.Time
	OrderingKey     *string
	Metadata        []byte
	Headers         []byte
	MetadataVersion *int
	// AvailableAt is nil at enqueue when the message is due at once (the
	// store then uses its own clock).
	AvailableAt *time.Time
	CreatedAt   time.Time
	Attempts    int
}

// NewRow encodes an outgoing message for insertion: it fills defaults (id,
// conversation id; a send time left unset stays out of the metadata
// document, and Envelope reads it back as the row's created_at), captures the trace context of ctx when the
// message carries none, serializes the body with ser and refuses a payload
// larger than maxPayload bytes (0 means DefaultMaxPayloadBytes) with a
// *PayloadTooLargeError.
func NewRow(ctx context.Context, o reliar.Outgoing, ser reliar.Serializer, maxPayload int) (Row, error) {
	if ser == nil {
		ser = reliar.JSON
	}
	if maxPayload <= 0 {
		maxPayload = DefaultMaxPayloadBytes
	}
	// A send time the caller did not set is the row's created_at, which
	// the store's clock writes and Envelope reads back: leaving it out of
	// the metadata document leaves most rows without one, and the server
	// parses no JSON for them (BENCHMARKS.md, "What an enqueue costs").
	sentSet := o.Metadata.Delivery.SentAt != nil
	o, err := o.Prepared(time.Now())
	if err != nil {
		return Row{}, err
	}
	if o.Metadata.Trace == (reliar.Trace{}) {
		o.Metadata.Trace = reliar.TraceFromContext(ctx)
	}
	payload, err := ser.Serialize(o.Body)
	if err != nil {
		return Row{}, err
	}
	if len(payload) > maxPayload {
		return Row{}, &PayloadTooLargeError{ID: o.ID, Size: len(payload), Max: maxPayload}
	}
	typ, version := reliar.TypeOf(o.Body)
	m := o.Metadata
	m.Delivery.ContentType = ser.ContentType()
	if !sentSet {
		m.Delivery.SentAt = nil
	}
	meta, err := encodeMetadata(&m)
	if err != nil {
		return Row{}, fmt.Errorf("outbox: encode metadata of %s: %w", o.ID, err)
	}
	if string(meta) == "{}" {
		meta = nil
	}
	r := Row{
		ID:              o.ID,
		MessageType:     typ,
		MessageVersion:  int(version),
		ContentType:     ser.ContentType(),
		Payload:         payload,
		CorrelationID:   nonEmpty(m.Correlation.CorrelationID),
		ConversationID:  &m.Correlation.ConversationID,
		CausationID:     m.Correlation.CausationID,
		RequestID:       m.Correlation.RequestID,
		TenantID:        nonEmpty(m.TenantID),
		ExpiresAt:       m.Delivery.ExpiresAt,
		OrderingKey:     nonEmpty(o.OrderingKey),
		Metadata:        meta,
		MetadataVersion: ptr(MetadataVersion),
	}
	if len(o.Headers) > 0 {
		if r.Headers, err = json.Marshal(o.Headers); err != nil {
			return Row{}, fmt.Errorf("outbox: encode headers of %s: %w", o.ID, err)
		}
	}
	if !o.AvailableAt.IsZero() {
		t := o.AvailableAt.UTC()
		r.AvailableAt = &t
	}
	return r, nil
}

// Envelope decodes a stored row into the envelope a publisher receives.
// Columns win over the metadata document for every field stored in both (for
// expires_at even when the column is NULL: it drives expiry); NULL
// metadata and headers decode as empty; a missing conversation id becomes the
// message id. It fails, with a *DecodeError, on bad metadata JSON, an unknown
// metadata version, headers that are not a JSON object of strings, or a
// message version outside 1-65535 (never rewritten): such a row is poison.
func (r *Row) Envelope() (reliar.SerializedEnvelope, error) {
	var m reliar.Metadata
	if r.MetadataVersion != nil && *r.MetadataVersion != MetadataVersion {
		return reliar.SerializedEnvelope{}, &DecodeError{ID: r.ID, Reason: fmt.Sprintf("unknown metadata_version %d", *r.MetadataVersion)}
	}
	if len(r.Metadata) > 0 && string(r.Metadata) != "null" {
		if err := decodeMetadata(r.Metadata, &m); err != nil {
			return reliar.SerializedEnvelope{}, &DecodeError{ID: r.ID, Reason: "metadata: " + err.Error()}
		}
	}
	var headers map[string]string
	if len(r.Headers) > 0 && string(r.Headers) != "null" {
		var err error
		if headers, err = decodeHeaders(r.Headers); err != nil {
			return reliar.SerializedEnvelope{}, &DecodeError{ID: r.ID, Reason: "headers are not a string map: " + err.Error()}
		}
	}
	if r.CorrelationID != nil {
		m.Correlation.CorrelationID = *r.CorrelationID
	}
	if r.ConversationID != nil {
		m.Correlation.ConversationID = *r.ConversationID
	}
	if m.Correlation.ConversationID == uuid.Nil {
		m.Correlation.ConversationID = r.ID
	}
	if r.CausationID != nil {
		m.Correlation.CausationID = r.CausationID
	}
	if r.RequestID != nil {
		m.Correlation.RequestID = r.RequestID
	}
	if r.TenantID != nil {
		m.TenantID = *r.TenantID
	}
	// expires_at drives expiry and RetryDead clears it, so the column is
	// authoritative even when NULL.
	m.Delivery.ExpiresAt = r.ExpiresAt
	if r.ContentType != "" {
		m.Delivery.ContentType = r.ContentType
	}
	if m.Delivery.SentAt == nil && !r.CreatedAt.IsZero() {
		// The caller set no send time: the row's creation is it.
		t := r.CreatedAt.UTC()
		m.Delivery.SentAt = &t
	}
	version := r.MessageVersion
	if version < 1 || version > 65535 {
		// Publishing it as another version would hand consumers a body they
		// would decode with the wrong schema.
		return reliar.SerializedEnvelope{}, &DecodeError{ID: r.ID, Reason: fmt.Sprintf("message_version %d is outside 1-65535", version)}
	}
	e := reliar.SerializedEnvelope{
		ID:             r.ID,
		MessageType:    r.MessageType,
		MessageVersion: uint16(version),
		ContentType:    m.Delivery.ContentType,
		Payload:        r.Payload,
		Metadata:       m,
		Headers:        headers,
		Sequence:       r.Sequence,
		Attempt:        r.Attempts + 1,
		CreatedAt:      r.CreatedAt,
	}
	if r.OrderingKey != nil {
		e.OrderingKey = *r.OrderingKey
	}
	return e, nil
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func ptr[T any](v T) *T { return &v }

// metadataDoc is what the metadata column holds: the Metadata document of
// MetadataVersion 1 (the JSON shape of reliar.Metadata) without the fields
// that have columns of their own (correlation ids, tenant, expiry, content
// type; columns win when decoding anyway) and without empty parts. Rows
// holding the full document, or written by hand, decode the same way.
type metadataDoc struct {
	Trace    reliar.Trace   `json:"trace,omitzero"`
	Routing  reliar.Routing `json:"routing,omitzero"`
	Delivery deliveryDoc    `json:"delivery,omitzero"`
}

type deliveryDoc struct {
	SentAt          *time.Time `json:"sent_at,omitempty"`
	DeduplicationID string     `json:"deduplication_id,omitempty"`
}

func newMetadataDoc(m *reliar.Metadata) metadataDoc {
	return metadataDoc{
		Trace:    m.Trace,
		Routing:  m.Routing,
		Delivery: deliveryDoc{SentAt: m.Delivery.SentAt, DeduplicationID: m.Delivery.DeduplicationID},
	}
}
