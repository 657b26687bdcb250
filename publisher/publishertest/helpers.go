package publishertest

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/reliar/reliar"
)

// timeoutContext returns a context bounded by the harness's timeout and
// cancelled when t ends.
func timeoutContext(t *testing.T, h Harness) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), h.Features.timeout())
	t.Cleanup(cancel)
	return ctx
}

// publish publishes e with the harness's publisher and fails t on error.
func publish(t *testing.T, h Harness, e *reliar.SerializedEnvelope) {
	t.Helper()
	if err := h.Publisher.Publish(timeoutContext(t, h), e); err != nil {
		t.Fatalf("Publish %s: %v", e.ID, err)
	}
}

// receive returns the next n delivered messages and fails t when fewer
// arrive within the harness's timeout.
func receive(t *testing.T, h Harness, n int) []Received {
	t.Helper()
	got, err := h.Receive(timeoutContext(t, h), n)
	if err != nil {
		t.Fatalf("Receive %d messages: got %d: %v", n, len(got), err)
	}
	if len(got) != n {
		t.Fatalf("Receive %d messages returned %d", n, len(got))
	}
	return got
}

// decode rebuilds a received envelope with the harness's decoder and
// fails t when it cannot.
func decode(t *testing.T, h Harness, r Received) *reliar.SerializedEnvelope {
	t.Helper()
	d, err := h.decode(r)
	if err != nil {
		t.Fatalf("decode the received message: %v", err)
	}
	return d
}

// decode applies the harness's decoder, or Decode.
func (h Harness) decode(r Received) (*reliar.SerializedEnvelope, error) {
	if h.Decode != nil {
		return h.Decode(r)
	}
	return Decode(r)
}

// reference checks r with the harness's reference library, when it has
// one.
func reference(t *testing.T, h Harness, r Received, sent *reliar.SerializedEnvelope) {
	t.Helper()
	if h.Reference == nil {
		return
	}
	if err := h.Reference(r, sent); err != nil {
		t.Errorf("message %s: the reference implementation: %v", sent.ID, err)
	}
}

// expectNothing fails t when a message arrives within the quiet period.
func expectNothing(t *testing.T, h Harness) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), h.Features.quiet())
	defer cancel()
	got, _ := h.Receive(ctx, 1)
	for _, r := range got {
		id := "undecodable"
		if d, err := h.decode(r); err == nil {
			id = d.ID.String()
		}
		t.Errorf("an unexpected message arrived: %s", id)
	}
}

// expectExactly receives len(sent) messages and fails t unless each sent
// envelope arrived once, intact, and nothing else arrived.
func expectExactly(t *testing.T, h Harness, sent map[reliar.MessageID]*reliar.SerializedEnvelope) {
	t.Helper()
	seen := make(map[reliar.MessageID]bool, len(sent))
	for _, r := range receive(t, h, len(sent)) {
		d := decode(t, h, r)
		want, ok := sent[d.ID]
		switch {
		case !ok:
			t.Errorf("received %s, which was never sent", d.ID)
		case seen[d.ID]:
			t.Errorf("received %s twice", d.ID)
		default:
			if err := Compare(want, d); err != nil {
				t.Errorf("message %s: %v", d.ID, err)
			}
		}
		seen[d.ID] = true
	}
	expectNothing(t, h)
}

// checkKind fails t unless err is non-nil and of the expected class.
func checkKind(t *testing.T, err error, transient bool, what string) {
	t.Helper()
	want := reliar.FailurePermanent
	if transient {
		want = reliar.FailureTransient
	}
	switch {
	case err == nil:
		t.Errorf("%s returned nil, want a %s error", what, want)
	case reliar.KindOf(err) != want:
		t.Errorf("%s returned a %s error, want %s: %v", what, reliar.KindOf(err), want, err)
	}
}

// batchPublisher returns the harness's publisher as a BatchPublisher,
// skipping t when the harness has no batch feature and failing it when
// the feature is claimed but not implemented.
func batchPublisher(t *testing.T, h Harness) reliar.BatchPublisher {
	t.Helper()
	if !h.Features.Batch {
		t.Skip("the publisher has no batch mode (Features.Batch)")
	}
	bp, ok := h.Publisher.(reliar.BatchPublisher)
	if !ok {
		t.Fatalf("Features.Batch is set but %T does not implement reliar.BatchPublisher", h.Publisher)
	}
	return bp
}

// publishBatch publishes n fresh envelopes in one batch and fails t unless
// there is exactly one result per envelope.
func publishBatch(t *testing.T, bp reliar.BatchPublisher, ctx context.Context, n int) []error {
	t.Helper()
	envs := make([]*reliar.SerializedEnvelope, n)
	for i := range envs {
		envs[i] = Envelope(i)
	}
	res := bp.PublishBatch(ctx, envs)
	if len(res) != n {
		t.Fatalf("PublishBatch returned %d results for %d envelopes", len(res), n)
	}
	return res
}

// doneContext is a context that has already ended, and the error a
// publisher must report for it.
type doneContext struct {
	name string
	ctx  context.Context
	want error
}

func doneContexts(t *testing.T) []doneContext {
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	expired, cancel2 := context.WithDeadline(t.Context(), time.Now().Add(-time.Second))
	t.Cleanup(cancel2)
	return []doneContext{
		{"cancelled", cancelled, context.Canceled},
		{"expired", expired, context.DeadlineExceeded},
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
