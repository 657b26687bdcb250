package otelobs_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/observability/otelobs"
	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/outbox/memstore"
)

func spanContext(t *testing.T, state string) trace.SpanContext {
	t.Helper()
	tid, _ := trace.TraceIDFromHex(enqueueTraceID)
	sid, _ := trace.SpanIDFromHex(enqueueSpanID)
	ts, err := trace.ParseTraceState(state)
	if err != nil {
		t.Fatalf("ParseTraceState: %v", err)
	}
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled, TraceState: ts})
}

func TestTraceExtractor(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		p    propagation.TextMapPropagator
		ctx  context.Context
		want reliar.Trace
	}{
		{"span in context", nil, trace.ContextWithSpanContext(context.Background(), spanContext(t, "")),
			reliar.Trace{Traceparent: "00-" + enqueueTraceID + "-" + enqueueSpanID + "-01"}},
		{"with tracestate", propagation.TraceContext{}, trace.ContextWithSpanContext(context.Background(), spanContext(t, "a=1,b=2")),
			reliar.Trace{Traceparent: "00-" + enqueueTraceID + "-" + enqueueSpanID + "-01", Tracestate: "a=1,b=2"}},
		{"composite propagator", propagation.NewCompositeTextMapPropagator(propagation.Baggage{}, propagation.TraceContext{}),
			trace.ContextWithSpanContext(context.Background(), spanContext(t, "")),
			reliar.Trace{Traceparent: "00-" + enqueueTraceID + "-" + enqueueSpanID + "-01"}},
		{"no span", nil, context.Background(), reliar.Trace{}},
		{"propagator without trace context", propagation.Baggage{}, trace.ContextWithSpanContext(context.Background(), spanContext(t, "")), reliar.Trace{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := otelobs.TraceExtractor(tt.p)(tt.ctx); got != tt.want {
				t.Fatalf("extracted %+v, want %+v", got, tt.want)
			}
		})
	}
}

// The extractor and the tracer agree: what enqueue records, publish parses.
func TestExtractedTraceRoundTrips(t *testing.T) {
	t.Parallel()
	tr, rec, tp := newTracer(t)
	ctx, enqueueSpan := tp.Tracer("app").Start(context.Background(), "handle order")
	env := envelope("", "")
	env.Metadata.Trace = otelobs.TraceExtractor(nil)(ctx)
	enqueueSpan.End()

	_, s := tr.StartPublish(context.Background(), env)
	s.End(nil)
	publish := rec.Ended()[1]
	if publish.Parent().SpanID() != enqueueSpan.SpanContext().SpanID() || publish.Parent().TraceID() != enqueueSpan.SpanContext().TraceID() {
		t.Fatalf("publish parent %s/%s, want the enqueuing span %s/%s", publish.Parent().TraceID(), publish.Parent().SpanID(),
			enqueueSpan.SpanContext().TraceID(), enqueueSpan.SpanContext().SpanID())
	}
}

type orderPlaced struct {
	OrderID string `json:"order_id"`
}

func (orderPlaced) MessageType() string { return "orders.placed" }

// TestDispatcherPublishSpanParentedByEnqueue enqueues under a span through
// the installed extractor and lets a real dispatcher publish: the recorded
// publish span's parent is the enqueuing span. It changes the process-wide
// extractor, so it does not run in parallel.
func TestDispatcherPublishSpanParentedByEnqueue(t *testing.T) {
	otelobs.InstallTraceExtractor(nil)
	t.Cleanup(func() { reliar.SetTraceExtractor(nil) })

	tr, rec, tp := newTracer(t)
	store := newMemStore()
	ctx, enqueueSpan := tp.Tracer("app").Start(t.Context(), "place order")
	ids, err := store.Enqueue(ctx, reliar.NewMsg(orderPlaced{OrderID: "A-1"}), reliar.NewMsg(orderPlaced{OrderID: "A-2"}))
	if err != nil {
		t.Fatalf("Enqueue: %v", err)
	}
	enqueueSpan.End()

	var mu sync.Mutex
	seen := map[reliar.MessageID]trace.SpanContext{}
	done := make(chan struct{})
	pub := reliar.PublisherFunc(func(ctx context.Context, env *reliar.SerializedEnvelope) error {
		mu.Lock()
		defer mu.Unlock()
		seen[env.ID] = trace.SpanContextFromContext(ctx)
		if len(seen) == len(ids) {
			close(done)
		}
		if env.ID == ids[1] {
			return reliar.Permanent(errors.New("refused"))
		}
		return nil
	})
	d, err := outbox.New(store, pub, outbox.DefaultSettings(), outbox.WithTracer(tr))
	if err != nil {
		t.Fatalf("outbox.New: %v", err)
	}
	runCtx, cancel := context.WithCancel(t.Context())
	ran := make(chan error, 1)
	go func() { ran <- d.Run(runCtx) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the dispatcher did not publish both messages within 10s")
	}
	cancel()
	if err := <-ran; err != nil {
		t.Fatalf("Run: %v", err)
	}

	want := enqueueSpan.SpanContext()
	publishes := 0
	for _, s := range rec.Ended() {
		if s.Name() != otelobs.PublishSpanName {
			continue
		}
		publishes++
		if s.Parent().TraceID() != want.TraceID() || s.Parent().SpanID() != want.SpanID() {
			t.Errorf("publish span parent %s/%s, want the enqueuing span %s/%s", s.Parent().TraceID(), s.Parent().SpanID(), want.TraceID(), want.SpanID())
		}
		id := attrs(s)["messaging.message.id"].AsString()
		if got := seen[mustParseID(t, id)]; got.SpanID() != s.SpanContext().SpanID() {
			t.Errorf("publisher of %s ran under span %s, want the publish span %s", id, got.SpanID(), s.SpanContext().SpanID())
		}
		if failed := id == ids[1].String(); failed != (s.Status().Code != 0) {
			t.Errorf("span of %s has status %v", id, s.Status())
		}
	}
	if publishes != len(ids) {
		t.Fatalf("%d publish spans, want %d", publishes, len(ids))
	}
}

func mustParseID(t *testing.T, s string) reliar.MessageID {
	t.Helper()
	id, err := reliar.ParseMessageID(s)
	if err != nil {
		t.Fatalf("ParseMessageID(%q): %v", s, err)
	}
	return id
}

// newMemStore returns an empty memstore.Store; memstore.New fails only on an
// invalid option.
func newMemStore(opts ...memstore.Option) *memstore.Store {
	s, err := memstore.New(opts...)
	if err != nil {
		panic(err)
	}
	return s
}
