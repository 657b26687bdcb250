package publishertest

import (
	"testing"

	"github.com/reliar/reliar"
)

// testMisconfigured: a destination missing by an operator's mistake fails
// every publish transiently, and the same publisher delivers once the
// operator created it.
func testMisconfigured(t *testing.T, h Harness) {
	if h.Misconfigured == nil {
		t.Skip("the harness cannot publish before its destination exists (Harness.Misconfigured)")
	}
	p, fix := h.Misconfigured(t)
	ctx := timeoutContext(t, h)
	for i := range 3 {
		checkKind(t, p.Publish(ctx, Envelope(i)), true, "Publish before the destination exists")
	}
	fix()
	e := Envelope(9)
	if err := p.Publish(ctx, e); err != nil {
		t.Fatalf("Publish after the destination was created: %v", err)
	}
	if d := decode(t, h, receive(t, h, 1)[0]); d.ID != e.ID {
		t.Fatalf("received %s, want %s", d.ID, e.ID)
	}
}

// testTooLarge: a message over the broker's limit fails permanently, alone
// and in a batch, where it does not fail the others.
func testTooLarge(t *testing.T, h Harness) {
	if h.TooLarge == nil {
		t.Skip("the harness has no message over the broker's limit (Harness.TooLarge)")
	}
	ctx := timeoutContext(t, h)
	checkKind(t, h.Publisher.Publish(ctx, h.TooLarge(t)), false, "Publish of a message over the broker's limit")
	bp, ok := h.Publisher.(reliar.BatchPublisher)
	if !ok || !h.Features.Batch {
		expectNothing(t, h)
		return
	}
	envs := []*reliar.SerializedEnvelope{Envelope(1), h.TooLarge(t), Envelope(3)}
	res := bp.PublishBatch(ctx, envs)
	if len(res) != len(envs) {
		t.Fatalf("PublishBatch returned %d results for %d envelopes", len(res), len(envs))
	}
	checkKind(t, res[1], false, "PublishBatch result of the message over the limit")
	sent := map[reliar.MessageID]*reliar.SerializedEnvelope{}
	for _, i := range []int{0, 2} {
		if res[i] != nil {
			t.Errorf("PublishBatch result %d: %v", i, res[i])
		}
		sent[envs[i].ID] = envs[i]
	}
	expectExactly(t, h, sent)
}

// ReservedHeaders are user headers in the CloudEvents namespaces of every
// binding, as only a row written by plain SQL can carry them: Enqueue
// refuses them.
var ReservedHeaders = map[string]string{
	"ce-my-ext":       "from plain SQL",
	"Ce_Other":        "from plain SQL",
	"cloudEvents:foo": "from plain SQL",
}

// testReservedUserHeaders: such a message is delivered, its headers
// renamed out of the namespaces, and a standard consumer still reads the
// event.
func testReservedUserHeaders(t *testing.T, h Harness) {
	e := Envelope(1)
	for k, v := range ReservedHeaders {
		e.Headers[k] = v
	}
	publish(t, h, e)
	r := receive(t, h, 1)[0]
	d := decode(t, h, r)
	want := *e
	want.Headers = make(map[string]string, len(e.Headers))
	for k, v := range e.Headers {
		want.Headers[normalName(reliar.RenamedHeader(k))] = v
	}
	if err := Compare(&want, d); err != nil {
		t.Errorf("a message with user headers in a CloudEvents namespace: %v", err)
	}
	reference(t, h, r, e)
}

// normalName is how the suite's decoders return header names.
func normalName(name string) string {
	b := []byte(name)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// testNonASCIIAttributes: attributes and user headers outside ASCII, with
// spaces, quotes and percent signs, arrive as they were sent. The source
// stays a URI reference, as CloudEvents requires, with an escape in it.
func testNonASCIIAttributes(t *testing.T, h Harness) {
	e := Envelope(1)
	e.MessageType = "bestellung.aufgegeben.größe-100%-\"x\""
	e.Metadata.Routing.Source = "/dienste/zahlung-für-Ä/100%25"
	e.Metadata.Correlation.CorrelationID = "korrelation ü 50% \"x\""
	e.Metadata.TenantID = "mandant-東京"
	e.Headers["x-user"] = "wert ä"
	publish(t, h, e)
	r := receive(t, h, 1)[0]
	if err := Compare(e, decode(t, h, r)); err != nil {
		t.Errorf("non-ASCII attributes: %v", err)
	}
	reference(t, h, r, e)
}
