package storetest

import (
	"encoding/json"
	"maps"
	"time"

	"github.com/google/uuid"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

func envelopeCases() []testCase {
	return []testCase{
		{name: "everything enqueued comes back from Acquire", run: envelopeRoundTrip},
		{name: "NULL metadata and headers decode as empty", run: envelopeNullColumns},
		{name: "columns win over the metadata document", run: envelopeColumnsWin},
	}
}

func envelopeRoundTrip(f *fixture) {
	now := f.now()
	expires := now.Add(time.Hour).Truncate(time.Millisecond)
	sent := now.Add(-time.Minute).Truncate(time.Millisecond)
	causation, request := uuid.New(), uuid.New()
	body := renamed{From: "old", To: "new"}
	out := reliar.Msg(reliar.Envelope[renamed]{
		ID:   reliar.NewMessageID(),
		Body: body,
		Metadata: reliar.Metadata{
			Correlation: reliar.Correlation{CorrelationID: "corr-1", ConversationID: uuid.New(), CausationID: &causation, RequestID: &request},
			Trace:       reliar.Trace{Traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", Tracestate: "vendor=1"},
			Routing:     reliar.Routing{Source: "storetest", Destination: "elsewhere", ReplyTo: "replies"},
			Delivery:    reliar.Delivery{SentAt: &sent, ExpiresAt: &expires, DeduplicationID: "dedup-1"},
			TenantID:    "tenant-1",
		},
		Headers:     map[string]string{"x-one": "1", "x-two": "two"},
		OrderingKey: "key-1",
	})
	f.enqueue(out)
	rec := f.claimOne(workerA, lease)
	e := rec.Envelope
	st := f.inspect(out.ID)

	if e.ID != out.ID || e.MessageType != "storetest.renamed" || e.MessageVersion != 3 {
		f.t.Errorf("id %s type %q version %d; want %s storetest.renamed 3", e.ID, e.MessageType, e.MessageVersion, out.ID)
	}
	if e.ContentType != reliar.JSON.ContentType() || e.Metadata.Delivery.ContentType != e.ContentType {
		f.t.Errorf("content type %q (metadata %q), want %q", e.ContentType, e.Metadata.Delivery.ContentType, reliar.JSON.ContentType())
	}
	var got renamed
	if err := json.Unmarshal(e.Payload, &got); err != nil || got != body {
		f.t.Errorf("payload %s decodes to %+v (%v), want %+v", e.Payload, got, err, body)
	}
	if e.OrderingKey != "key-1" || !maps.Equal(e.Headers, out.Headers) {
		f.t.Errorf("ordering key %q headers %v; want key-1 %v", e.OrderingKey, e.Headers, out.Headers)
	}
	if e.Sequence != st.Sequence || e.Attempt != 1 {
		f.t.Errorf("sequence %d attempt %d; want %d 1", e.Sequence, e.Attempt, st.Sequence)
	}
	m, want := e.Metadata, out.Metadata
	if m.Correlation.CorrelationID != want.Correlation.CorrelationID ||
		m.Correlation.ConversationID != want.Correlation.ConversationID ||
		deref(m.Correlation.CausationID) != any(causation) || deref(m.Correlation.RequestID) != any(request) {
		f.t.Errorf("correlation %+v, want %+v", m.Correlation, want.Correlation)
	}
	if m.Trace != want.Trace || m.Routing != want.Routing || m.TenantID != want.TenantID ||
		m.Delivery.DeduplicationID != want.Delivery.DeduplicationID {
		f.t.Errorf("trace %+v routing %+v tenant %q dedup %q; want %+v %+v %q %q", m.Trace, m.Routing, m.TenantID,
			m.Delivery.DeduplicationID, want.Trace, want.Routing, want.TenantID, want.Delivery.DeduplicationID)
	}
	f.near("Delivery.ExpiresAt", m.Delivery.ExpiresAt, expires, expires)
	f.near("Delivery.SentAt", m.Delivery.SentAt, sent, sent)
	f.near("expires_at", st.ExpiresAt, expires, expires)
}

func envelopeNullColumns(f *fixture) {
	r := outboxdriver.Row{ID: reliar.NewMessageID(), MessageType: "storetest.plain", Payload: []byte(`{"n":1}`)}
	f.insertRow(r)
	b := f.acquire(outboxdriver.AcquireRequest{BatchSize: 10})
	if len(b.Poisoned) != 0 || len(b.Records) != 1 {
		f.t.Fatalf("got %d records and poisoned %+v, want the row decoded", len(b.Records), b.Poisoned)
	}
	e := b.Records[0].Envelope
	if e.ID != r.ID || e.MessageType != r.MessageType || string(e.Payload) != string(r.Payload) || e.MessageVersion != 1 {
		f.t.Errorf("id %s type %q payload %s version %d; want %s %q %s 1", e.ID, e.MessageType, e.Payload, e.MessageVersion, r.ID, r.MessageType, r.Payload)
	}
	if len(e.Headers) != 0 || e.OrderingKey != "" || e.Metadata.TenantID != "" || e.Metadata.Delivery.ExpiresAt != nil {
		f.t.Errorf("headers %v ordering key %q tenant %q expires %v; want all empty", e.Headers, e.OrderingKey, e.Metadata.TenantID, e.Metadata.Delivery.ExpiresAt)
	}
	if e.Metadata.Correlation.ConversationID != r.ID {
		f.t.Errorf("conversation id %s, want the message id %s", e.Metadata.Correlation.ConversationID, r.ID)
	}
}

func envelopeColumnsWin(f *fixture) {
	docConversation, colConversation := uuid.New(), uuid.New()
	doc := `{"correlation":{"correlation_id":"doc-corr","conversation_id":"` + docConversation.String() + `"},` +
		`"routing":{"source":"doc-source"},"delivery":{"content_type":"text/doc"},"tenant_id":"doc"}`
	r := outboxdriver.Row{
		ID:              reliar.NewMessageID(),
		MessageType:     "storetest.columns",
		ContentType:     "application/col",
		Payload:         []byte(`{}`),
		CorrelationID:   ptr("col-corr"),
		ConversationID:  &colConversation,
		TenantID:        ptr("col"),
		Metadata:        []byte(doc),
		MetadataVersion: ptr(outboxdriver.MetadataVersion),
	}
	f.insertRow(r)
	recs := f.claim(10)
	if len(recs) != 1 {
		f.t.Fatalf("claimed %d records, want 1", len(recs))
	}
	m := recs[0].Envelope.Metadata
	if m.TenantID != "col" || m.Correlation.CorrelationID != "col-corr" || m.Correlation.ConversationID != colConversation {
		f.t.Errorf("tenant %q correlation %q conversation %s; want the columns col, col-corr, %s",
			m.TenantID, m.Correlation.CorrelationID, m.Correlation.ConversationID, colConversation)
	}
	if ct := recs[0].Envelope.ContentType; ct != "application/col" {
		f.t.Errorf("content type %q, want the column's application/col", ct)
	}
	if m.Routing.Source != "doc-source" {
		f.t.Errorf("routing source %q, want doc-source from the document (no column holds it)", m.Routing.Source)
	}
}
