package publishertest_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/publisher/publishertest"
)

func TestCompare(t *testing.T) {
	other := uuid.New()
	later := time.Now().Add(time.Hour)
	tests := []struct {
		field string
		edit  func(e *reliar.SerializedEnvelope)
	}{
		{"id", func(e *reliar.SerializedEnvelope) { e.ID = other }},
		{"message type", func(e *reliar.SerializedEnvelope) { e.MessageType = "x" }},
		{"message version", func(e *reliar.SerializedEnvelope) { e.MessageVersion = 9 }},
		{"content type", func(e *reliar.SerializedEnvelope) { e.ContentType = "text/plain" }},
		{"payload", func(e *reliar.SerializedEnvelope) { e.Payload = []byte("x") }},
		{"ordering key", func(e *reliar.SerializedEnvelope) { e.OrderingKey = "x" }},
		{"sequence", func(e *reliar.SerializedEnvelope) { e.Sequence = 99 }},
		{"user headers", func(e *reliar.SerializedEnvelope) { e.Headers = map[string]string{"x-other": "secret"} }},
		{"created at", func(e *reliar.SerializedEnvelope) { e.CreatedAt = later }},
		{"correlation id", func(e *reliar.SerializedEnvelope) { e.Metadata.Correlation.CorrelationID = "x" }},
		{"conversation id", func(e *reliar.SerializedEnvelope) { e.Metadata.Correlation.ConversationID = other }},
		{"causation id", func(e *reliar.SerializedEnvelope) { e.Metadata.Correlation.CausationID = nil }},
		{"request id", func(e *reliar.SerializedEnvelope) { e.Metadata.Correlation.RequestID = &other }},
		{"trace", func(e *reliar.SerializedEnvelope) { e.Metadata.Trace.Tracestate = "" }},
		{"routing", func(e *reliar.SerializedEnvelope) { e.Metadata.Routing.ReplyTo = "" }},
		{"tenant", func(e *reliar.SerializedEnvelope) { e.Metadata.TenantID = "" }},
		{"sent at", func(e *reliar.SerializedEnvelope) { e.Metadata.Delivery.SentAt = &later }},
		{"expires at", func(e *reliar.SerializedEnvelope) { e.Metadata.Delivery.ExpiresAt = nil }},
		{"deduplication id", func(e *reliar.SerializedEnvelope) { e.Metadata.Delivery.DeduplicationID = "" }},
		{"delivery content type", func(e *reliar.SerializedEnvelope) { e.Metadata.Delivery.ContentType = "" }},
	}
	for _, tt := range tests {
		t.Run(tt.field, func(t *testing.T) {
			want := publishertest.Envelope(1)
			got := *want
			got.Metadata.Correlation.CausationID = ptr(*want.Metadata.Correlation.CausationID)
			tt.edit(&got)
			err := publishertest.Compare(want, &got)
			if err == nil || !strings.Contains(err.Error(), ": "+tt.field+":") {
				t.Fatalf("Compare: %v, want a mismatch of %s", err, tt.field)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("Compare printed a header value: %v", err)
			}
		})
	}
	e := publishertest.Envelope(1)
	if err := publishertest.Compare(e, e); err != nil {
		t.Fatalf("Compare(e, e): %v", err)
	}
}

func TestEnvelope(t *testing.T) {
	a, b := publishertest.Envelope(5), publishertest.Unkeyed(5)
	if a.ID == b.ID {
		t.Error("two envelopes share an id")
	}
	if a.OrderingKey != "key-1" || b.OrderingKey != "" {
		t.Errorf("ordering keys %q and %q, want key-1 and none", a.OrderingKey, b.OrderingKey)
	}
	if got := b.PartitionKey(); got != b.Metadata.Correlation.ConversationID.String() || got == b.ID.String() {
		t.Errorf("Unkeyed partition key %q is not its own conversation id", got)
	}
	d, err := publishertest.Decode(publishertest.Received{Headers: reliar.CloudEventHeaders(a), Payload: a.Payload})
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if err := publishertest.Compare(a, d); err != nil {
		t.Fatalf("an envelope does not survive CloudEventHeaders and back: %v", err)
	}
}

func ptr[T any](v T) *T { return &v }
