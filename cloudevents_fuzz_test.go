package reliar_test

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/reliar/reliar"
)

// FuzzEnvelopeFromHeaders: any headers decode or fail cleanly, never panic,
// and whatever decodes maps back to headers that decode to the same
// envelope.
func FuzzEnvelopeFromHeaders(f *testing.F) {
	id := uuid.MustParse("0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b")
	f.Add(id.String(), "orders.placed", "3", "2026-01-02T03:04:05Z", id.String(), "tenant", "k", "user-value")
	f.Add("", "", "", "", "", "", "", "")
	f.Add("not-a-uuid", "t", "99999", "yesterday", "x", "", "", "")
	f.Add(id.String(), "t", "-1", "2026-01-02T03:04:05.123456789+02:00", "", "\x00", "\xff", "")
	f.Fuzz(func(t *testing.T, ceID, typ, version, ceTime, conv, tenant, key, user string) {
		h := map[string]string{
			"ce-id": ceID, "ce-type": typ, "ce-messageversion": version, "ce-time": ceTime,
			"ce-conversationid": conv, "ce-tenantid": tenant, "ce-partitionkey": key, "x-user": user,
		}
		env, err := reliar.EnvelopeFromHeaders(h, []byte("payload"))
		if err != nil {
			return
		}
		again, err := reliar.EnvelopeFromHeaders(reliar.CloudEventHeaders(env), env.Payload)
		if err != nil {
			t.Fatalf("re-decoding the mapped headers of a decoded envelope: %v", err)
		}
		if again.ID != env.ID || again.MessageType != env.MessageType || again.MessageVersion != env.MessageVersion ||
			again.OrderingKey != env.OrderingKey || again.Metadata.TenantID != env.Metadata.TenantID {
			t.Fatalf("round trip changed the envelope: %+v vs %+v", again, env)
		}
	})
}

func TestCloudEventsRoundTrip(t *testing.T) {
	sent := time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)
	exp := sent.Add(time.Hour)
	cause, req := uuid.New(), uuid.New()
	env := &reliar.SerializedEnvelope{
		ID: reliar.NewMessageID(), MessageType: "orders.placed", MessageVersion: 3, ContentType: "application/json",
		Payload: []byte(`{"a":1}`), OrderingKey: "order-1", Sequence: 42,
		Headers: map[string]string{"x-user": "v", "ce-id": "spoofed"},
		Metadata: reliar.Metadata{
			Correlation: reliar.Correlation{CorrelationID: "corr", ConversationID: uuid.New(), CausationID: &cause, RequestID: &req},
			Trace:       reliar.Trace{Traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", Tracestate: "a=b"},
			Routing:     reliar.Routing{Source: "orders-svc", Destination: "billing", ReplyTo: "replies"},
			Delivery:    reliar.Delivery{SentAt: &sent, ExpiresAt: &exp, DeduplicationID: "dedup", ContentType: "application/json"},
			TenantID:    "acme",
		},
	}
	h := reliar.CloudEventHeaders(env)
	if h["ce-id"] != env.ID.String() || h["ce-specversion"] != "1.0" || h["ce-source"] != "orders-svc" {
		t.Fatalf("headers %v", h)
	}
	got, err := reliar.EnvelopeFromHeaders(h, env.Payload)
	if err != nil {
		t.Fatal(err)
	}
	m, g := env.Metadata, got.Metadata
	if got.ID != env.ID || got.MessageType != env.MessageType || got.MessageVersion != 3 || got.OrderingKey != "order-1" ||
		got.Sequence != 42 || got.ContentType != env.ContentType || got.Headers["x-user"] != "v" || got.Headers["x-ce-id"] != "spoofed" || len(got.Headers) != 2 ||
		g.Correlation.CorrelationID != m.Correlation.CorrelationID || g.Correlation.ConversationID != m.Correlation.ConversationID ||
		*g.Correlation.CausationID != cause || *g.Correlation.RequestID != req || g.Trace != m.Trace || g.Routing != m.Routing ||
		!g.Delivery.SentAt.Equal(sent) || !g.Delivery.ExpiresAt.Equal(exp) || g.Delivery.DeduplicationID != "dedup" || g.TenantID != "acme" {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, env)
	}
	if _, err := reliar.EnvelopeFromHeaders(map[string]string{}, nil); err == nil {
		t.Fatal("headers without ce-id decoded")
	}
}
