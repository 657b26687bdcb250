package publishertest

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/reliar/reliar"
)

// Envelope returns a fresh envelope (new id) with every metadata field set,
// two user headers and the ordering key "key-<seq mod 4>", so a publisher
// test can check the whole mapping. User header names are lower case, as
// reliar.EnvelopeFromHeaders returns them; times are whole microseconds, as
// a database stores them.
func Envelope(seq int) *reliar.SerializedEnvelope {
	e := Unkeyed(seq)
	e.OrderingKey = "key-" + strconv.Itoa(seq%4)
	return e
}

// Unkeyed is [Envelope] without an ordering key: its partition key is its
// conversation id, which differs from its message id.
func Unkeyed(seq int) *reliar.SerializedEnvelope {
	id := reliar.NewMessageID()
	causation, request := uuid.New(), uuid.New()
	sent := time.Now().UTC().Truncate(time.Microsecond)
	expires := sent.Add(time.Hour)
	const contentType = "application/json"
	return &reliar.SerializedEnvelope{
		ID:             id,
		MessageType:    "publishertest.happened",
		MessageVersion: 3,
		ContentType:    contentType,
		Payload:        fmt.Appendf(nil, `{"seq":%d,"text":"héllo wörld"}`, seq),
		Metadata: reliar.Metadata{
			Correlation: reliar.Correlation{
				CorrelationID:  "corr-" + strconv.Itoa(seq),
				ConversationID: uuid.New(),
				CausationID:    &causation,
				RequestID:      &request,
			},
			Trace: reliar.Trace{
				Traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
				Tracestate:  "vendor=value",
			},
			Routing: reliar.Routing{
				Source:      "publishertest",
				Destination: "somewhere",
				ReplyTo:     "replies",
			},
			Delivery: reliar.Delivery{
				SentAt:          &sent,
				ExpiresAt:       &expires,
				DeduplicationID: "dedup-" + strconv.Itoa(seq),
				ContentType:     contentType,
			},
			TenantID: "tenant-a",
		},
		Headers: map[string]string{
			"x-seq":  strconv.Itoa(seq),
			"x-user": "user header value",
		},
		Sequence:  int64(seq) + 1,
		Attempt:   1,
		CreatedAt: sent,
	}
}

// Decode rebuilds the envelope a received message carries, with
// reliar.EnvelopeFromHeaders.
func Decode(r Received) (*reliar.SerializedEnvelope, error) {
	return reliar.EnvelopeFromHeaders(r.Headers, r.Payload)
}

// errMismatch is wrapped by every error of [Compare].
var errMismatch = errors.New("publishertest: envelope mismatch")

// Compare reports the first difference between the envelope sent and the
// envelope decoded from what the broker delivered, or nil when they carry
// the same message. Attempt is not compared: it is bookkeeping, not part
// of the message.
func Compare(want, got *reliar.SerializedEnvelope) error {
	diff := func(field string, w, g any) error {
		return fmt.Errorf("%w: %s: sent %v, received %v", errMismatch, field, w, g)
	}
	switch {
	case want.ID != got.ID:
		return diff("id", want.ID, got.ID)
	case want.MessageType != got.MessageType:
		return diff("message type", want.MessageType, got.MessageType)
	case want.MessageVersion != got.MessageVersion:
		return diff("message version", want.MessageVersion, got.MessageVersion)
	case want.ContentType != got.ContentType:
		return diff("content type", want.ContentType, got.ContentType)
	case !bytes.Equal(want.Payload, got.Payload):
		return diff("payload", fmt.Sprintf("%d bytes", len(want.Payload)), fmt.Sprintf("%d bytes", len(got.Payload)))
	case want.OrderingKey != got.OrderingKey:
		return diff("ordering key", want.OrderingKey, got.OrderingKey)
	case want.Sequence != got.Sequence:
		return diff("sequence", want.Sequence, got.Sequence)
	case !maps.Equal(want.Headers, got.Headers):
		return diff("user headers", sortedKeys(want.Headers), sortedKeys(got.Headers))
	case !want.CreatedAt.Equal(got.CreatedAt):
		return diff("created at", want.CreatedAt, got.CreatedAt)
	}
	return compareMetadata(want.Metadata, got.Metadata, diff)
}

func compareMetadata(w, g reliar.Metadata, diff func(string, any, any) error) error {
	switch {
	case w.Correlation.CorrelationID != g.Correlation.CorrelationID:
		return diff("correlation id", w.Correlation.CorrelationID, g.Correlation.CorrelationID)
	case w.Correlation.ConversationID != g.Correlation.ConversationID:
		return diff("conversation id", w.Correlation.ConversationID, g.Correlation.ConversationID)
	case !sameID(w.Correlation.CausationID, g.Correlation.CausationID):
		return diff("causation id", w.Correlation.CausationID, g.Correlation.CausationID)
	case !sameID(w.Correlation.RequestID, g.Correlation.RequestID):
		return diff("request id", w.Correlation.RequestID, g.Correlation.RequestID)
	case w.Trace != g.Trace:
		return diff("trace", w.Trace, g.Trace)
	case w.Routing != g.Routing:
		return diff("routing", w.Routing, g.Routing)
	case w.TenantID != g.TenantID:
		return diff("tenant", w.TenantID, g.TenantID)
	case !sameTime(w.Delivery.SentAt, g.Delivery.SentAt):
		return diff("sent at", w.Delivery.SentAt, g.Delivery.SentAt)
	case !sameTime(w.Delivery.ExpiresAt, g.Delivery.ExpiresAt):
		return diff("expires at", w.Delivery.ExpiresAt, g.Delivery.ExpiresAt)
	case w.Delivery.DeduplicationID != g.Delivery.DeduplicationID:
		return diff("deduplication id", w.Delivery.DeduplicationID, g.Delivery.DeduplicationID)
	case w.Delivery.ContentType != g.Delivery.ContentType:
		return diff("delivery content type", w.Delivery.ContentType, g.Delivery.ContentType)
	}
	return nil
}

func sameID(a, b *uuid.UUID) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func sameTime(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(*b)
}

// sortedKeys lists a header map's names only: header values are never
// printed.
func sortedKeys(h map[string]string) []string {
	return slices.Sorted(maps.Keys(h))
}
