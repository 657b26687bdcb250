package otelobs_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/observability/otelobs"
)

const (
	enqueueTraceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	enqueueSpanID  = "00f067aa0ba902b7"
)

// newTracer returns a Tracer over an SDK provider whose ended spans the
// recorder keeps.
func newTracer(t *testing.T, opts ...otelobs.Option) (*otelobs.Tracer, *tracetest.SpanRecorder, *sdktrace.TracerProvider) {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() {
		if err := tp.Shutdown(context.Background()); err != nil {
			t.Errorf("TracerProvider.Shutdown: %v", err)
		}
	})
	tr, err := otelobs.NewTracer(tp, opts...)
	if err != nil {
		t.Fatalf("NewTracer: %v", err)
	}
	return tr, rec, tp
}

func onlySpan(t *testing.T, rec *tracetest.SpanRecorder) sdktrace.ReadOnlySpan {
	t.Helper()
	ended := rec.Ended()
	if len(ended) != 1 {
		t.Fatalf("%d spans ended, want 1", len(ended))
	}
	return ended[0]
}

func attrs(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	m := make(map[attribute.Key]attribute.Value)
	for _, kv := range s.Attributes() {
		m[kv.Key] = kv.Value
	}
	return m
}

func envelope(traceparent, tracestate string) *reliar.SerializedEnvelope {
	id := reliar.NewMessageID()
	env := &reliar.SerializedEnvelope{ID: id, MessageType: "orders.placed", Attempt: 3}
	env.Metadata.Correlation.ConversationID = [16]byte(id)
	env.Metadata.Trace = reliar.Trace{Traceparent: traceparent, Tracestate: tracestate}
	return env
}

func TestPublishSpanIsChildOfEnqueueTraceparent(t *testing.T) {
	t.Parallel()
	tr, rec, _ := newTracer(t)
	env := envelope("00-"+enqueueTraceID+"-"+enqueueSpanID+"-01", "vendor=value")
	env.Metadata.Routing.Destination = "orders"

	ctx, s := tr.StartPublish(context.Background(), env)
	inner := trace.SpanContextFromContext(ctx)
	s.End(nil)

	got := onlySpan(t, rec)
	if got.Name() != "reliar.outbox.publish" || got.SpanKind() != trace.SpanKindProducer {
		t.Errorf("span %q kind %v, want reliar.outbox.publish, producer", got.Name(), got.SpanKind())
	}
	if p := got.Parent(); p.TraceID().String() != enqueueTraceID || p.SpanID().String() != enqueueSpanID || !p.IsRemote() {
		t.Fatalf("parent = %s/%s remote %v, want %s/%s remote", p.TraceID(), p.SpanID(), p.IsRemote(), enqueueTraceID, enqueueSpanID)
	}
	if got.SpanContext().TraceID().String() != enqueueTraceID {
		t.Errorf("span trace id %s, want the enqueued %s", got.SpanContext().TraceID(), enqueueTraceID)
	}
	if ts := got.SpanContext().TraceState().String(); ts != "vendor=value" {
		t.Errorf("tracestate %q, want vendor=value", ts)
	}
	if inner.SpanID() != got.SpanContext().SpanID() {
		t.Errorf("returned context carries span %s, want the publish span %s", inner.SpanID(), got.SpanContext().SpanID())
	}
	if len(got.Links()) != 0 {
		t.Errorf("links %v, want none", got.Links())
	}
	want := map[attribute.Key]attribute.Value{
		"messaging.message.id":              attribute.StringValue(env.ID.String()),
		"messaging.message.conversation_id": attribute.StringValue(env.ID.String()),
		"messaging.operation.type":          attribute.StringValue("send"),
		"messaging.destination.name":        attribute.StringValue("orders"),
		"reliar.message_type":               attribute.StringValue("orders.placed"),
		"reliar.attempt":                    attribute.IntValue(3),
	}
	a := attrs(got)
	for k, v := range want {
		if a[k] != v {
			t.Errorf("attribute %s = %v, want %v", k, a[k].Emit(), v.Emit())
		}
	}
	if _, ok := a["messaging.system"]; ok {
		t.Error("messaging.system set without WithMessagingSystem")
	}
	if got.Status().Code != codes.Unset {
		t.Errorf("status %v, want unset", got.Status())
	}
}

func TestPublishSpanParent(t *testing.T) {
	t.Parallel()
	valid := "00-" + enqueueTraceID + "-" + enqueueSpanID + "-01"
	tests := []struct {
		name        string
		traceparent string
		ctxSpan     bool
		wantParent  string // "enqueue", "ctx" or "root"
		wantLink    bool
	}{
		{"enqueue context, no dispatcher span", valid, false, "enqueue", false},
		{"enqueue context and a dispatcher span", valid, true, "enqueue", true},
		{"no enqueue context, dispatcher span", "", true, "ctx", false},
		{"no enqueue context, no dispatcher span", "", false, "root", false},
		{"malformed traceparent", "00-zz-yy-01", true, "ctx", false},
		{"all-zero trace id", "00-00000000000000000000000000000000-" + enqueueSpanID + "-01", false, "root", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tr, rec, tp := newTracer(t)
			ctx := context.Background()
			var outer trace.Span
			if tt.ctxSpan {
				ctx, outer = tp.Tracer("dispatcher").Start(ctx, "run")
			}
			_, s := tr.StartPublish(ctx, envelope(tt.traceparent, ""))
			s.End(nil)
			got := onlySpan(t, rec)
			if outer != nil {
				outer.End()
			}

			p := got.Parent()
			switch tt.wantParent {
			case "enqueue":
				if p.TraceID().String() != enqueueTraceID || p.SpanID().String() != enqueueSpanID {
					t.Errorf("parent %s/%s, want the enqueued %s/%s", p.TraceID(), p.SpanID(), enqueueTraceID, enqueueSpanID)
				}
			case "ctx":
				if p.SpanID() != outer.SpanContext().SpanID() {
					t.Errorf("parent %s, want the dispatcher's span %s", p.SpanID(), outer.SpanContext().SpanID())
				}
			case "root":
				if p.IsValid() {
					t.Errorf("parent %s/%s, want a root span", p.TraceID(), p.SpanID())
				}
			}
			links := got.Links()
			if tt.wantLink {
				if len(links) != 1 || links[0].SpanContext.SpanID() != outer.SpanContext().SpanID() {
					t.Errorf("links %v, want one to the dispatcher's span", links)
				}
			} else if len(links) != 0 {
				t.Errorf("links %v, want none", links)
			}
		})
	}
}

// An enqueue context that was not sampled is honoured: the default
// parent-based sampler records no publish span.
func TestPublishSpanFollowsEnqueueSampling(t *testing.T) {
	t.Parallel()
	tr, rec, _ := newTracer(t)
	ctx, s := tr.StartPublish(context.Background(), envelope("00-"+enqueueTraceID+"-"+enqueueSpanID+"-00", ""))
	s.End(nil)
	if n := len(rec.Ended()); n != 0 {
		t.Fatalf("%d spans recorded for an unsampled enqueue context, want 0", n)
	}
	if got := trace.SpanContextFromContext(ctx).TraceID().String(); got != enqueueTraceID {
		t.Fatalf("context trace id %s, want the enqueued %s", got, enqueueTraceID)
	}
}

func TestMessagingSystemOption(t *testing.T) {
	t.Parallel()
	tr, rec, _ := newTracer(t, otelobs.WithMessagingSystem("kafka"), nil)
	_, s := tr.StartPublish(context.Background(), envelope("", ""))
	s.End(nil)
	got := onlySpan(t, rec)
	if v := attrs(got)["messaging.system"]; v.AsString() != "kafka" {
		t.Fatalf("messaging.system = %q, want kafka", v.Emit())
	}
	if _, ok := attrs(got)["messaging.destination.name"]; ok {
		t.Error("messaging.destination.name set for a message without a destination")
	}
}

func TestClaimSpan(t *testing.T) {
	t.Parallel()
	tr, rec, tp := newTracer(t)
	ctx, outer := tp.Tracer("dispatcher").Start(context.Background(), "run")
	_, s := tr.StartClaim(ctx, "worker-7", 25)
	s.End(nil)
	outer.End()

	got := rec.Ended()[0]
	if got.Name() != "reliar.outbox.claim" || got.SpanKind() != trace.SpanKindInternal {
		t.Fatalf("span %q kind %v, want reliar.outbox.claim, internal", got.Name(), got.SpanKind())
	}
	if got.Parent().SpanID() != outer.SpanContext().SpanID() {
		t.Errorf("claim span parent %s, want the dispatcher's span", got.Parent().SpanID())
	}
	a := attrs(got)
	if a["reliar.worker.id"].AsString() != "worker-7" || a["reliar.claim.requested"].AsInt64() != 25 {
		t.Errorf("attributes %v, want worker-7 and 25", got.Attributes())
	}
	if got.InstrumentationScope().Name != otelobs.ScopeName {
		t.Errorf("scope %q, want %q", got.InstrumentationScope().Name, otelobs.ScopeName)
	}
}

func TestSpanEndRecordsError(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		err      error
		wantKind string
	}{
		{"publish, permanent", reliar.Permanent(errors.New("unknown topic")), "permanent"},
		{"publish, transient", fmt.Errorf("dial broker: %w", context.DeadlineExceeded), "transient"},
		{"claim, transient", errors.New("connection reset\x00"), "transient"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tr, rec, _ := newTracer(t)
			if strings.HasPrefix(tt.name, "claim") {
				_, s := tr.StartClaim(context.Background(), "w", 1)
				s.End(tt.err)
			} else {
				_, s := tr.StartPublish(context.Background(), envelope("", ""))
				s.End(tt.err)
			}
			got := onlySpan(t, rec)
			wantDesc := strings.ReplaceAll(tt.err.Error(), "\x00", "")
			if got.Status().Code != codes.Error || got.Status().Description != wantDesc {
				t.Errorf("status %+v, want Error %q", got.Status(), wantDesc)
			}
			if k := attrs(got)["reliar.failure_kind"].AsString(); k != tt.wantKind {
				t.Errorf("reliar.failure_kind = %q, want %q", k, tt.wantKind)
			}
			events := got.Events()
			if len(events) != 1 || events[0].Name != "exception" {
				t.Fatalf("events %v, want one exception", events)
			}
			for _, kv := range events[0].Attributes {
				if kv.Key == "exception.message" && kv.Value.AsString() != tt.err.Error() {
					t.Errorf("exception.message %q, want %q", kv.Value.AsString(), tt.err.Error())
				}
			}
		})
	}
}

func TestNewTracerNilProviderUsesGlobal(t *testing.T) {
	t.Parallel()
	// The global provider is a no-op until set: spans open and end, and the
	// enqueue context still becomes the returned context's.
	tr, err := otelobs.NewTracer(nil)
	if err != nil {
		t.Fatalf("NewTracer(nil): %v", err)
	}
	ctx, s := tr.StartPublish(context.Background(), envelope("00-"+enqueueTraceID+"-"+enqueueSpanID+"-01", ""))
	s.End(errors.New("boom"))
	if got := trace.SpanContextFromContext(ctx).TraceID().String(); got != enqueueTraceID {
		t.Fatalf("context trace id %s, want %s", got, enqueueTraceID)
	}
}

func TestOutcomeSpan(t *testing.T) {
	t.Parallel()
	tr, rec, tp := newTracer(t, otelobs.WithMessagingSystem("nats"))
	ctx, outer := tp.Tracer("dispatcher").Start(context.Background(), "run")
	_, s := tr.StartOutcomeWrite(ctx, "complete", 12)
	s.End(nil)
	_, s = tr.StartOutcomeWrite(ctx, "fail", 2)
	s.End(errors.New("connection reset"))
	outer.End()

	ended := rec.Ended()
	if len(ended) != 3 {
		t.Fatalf("%d spans ended, want 3", len(ended))
	}
	for i, want := range []struct {
		op   string
		rows int64
	}{{"complete", 12}, {"fail", 2}} {
		got := ended[i]
		if got.Name() != otelobs.OutcomeSpanName || got.SpanKind() != trace.SpanKindInternal {
			t.Fatalf("span %q kind %v, want %s, internal", got.Name(), got.SpanKind(), otelobs.OutcomeSpanName)
		}
		if got.Parent().SpanID() != outer.SpanContext().SpanID() {
			t.Errorf("outcome span parent %s, want the dispatcher's span", got.Parent().SpanID())
		}
		a := attrs(got)
		if a["messaging.operation.name"].AsString() != want.op || a["messaging.operation.type"].AsString() != "settle" ||
			a["messaging.batch.message_count"].AsInt64() != want.rows || a["messaging.system"].AsString() != "nats" {
			t.Errorf("attributes %v, want %s, settle, %d rows, nats", got.Attributes(), want.op, want.rows)
		}
	}
	if failed := ended[1]; failed.Status().Code != codes.Error || attrs(failed)["reliar.failure_kind"].AsString() != "transient" {
		t.Errorf("failed write: status %+v, attributes %v; want Error, transient", failed.Status(), failed.Attributes())
	}
}
