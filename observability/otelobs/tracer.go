package otelobs

import (
	"context"
	"slices"

	global "go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/google/uuid"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// The span names.
const (
	ClaimSpanName   = "reliar.outbox.claim"
	PublishSpanName = "reliar.outbox.publish"
	OutcomeSpanName = "reliar.outbox.outcome"
)

// The attribute keys of the spans that no semantic convention covers.
const (
	keyWorkerID       = attribute.Key("reliar.worker.id")
	keyClaimRequested = attribute.Key("reliar.claim.requested")
	keyAttempt        = attribute.Key("reliar.attempt")
)

// Tracer implements outbox.Tracer with an OpenTelemetry tracer. Make one
// with NewTracer; it is safe for concurrent use.
type Tracer struct {
	tracer trace.Tracer
	// common are the WithAttributes attributes, on every span;
	// messagingAttrs are those and messaging.system, on the publish and
	// outcome spans.
	common         []attribute.KeyValue
	messagingAttrs []attribute.KeyValue
}

var _ outbox.Tracer = (*Tracer)(nil)

// NewTracer returns a Tracer whose spans come from tp (nil means the global
// TracerProvider), under the instrumentation scope ScopeName. It accepts
// WithMessagingSystem and WithAttributes; any other Option, or a bad one,
// makes it fail with an error wrapping ErrInvalidOption.
func NewTracer(tp trace.TracerProvider, opts ...Option) (*Tracer, error) {
	o, err := newOptions(forTracer, opts)
	if err != nil {
		return nil, err
	}
	if tp == nil {
		tp = global.GetTracerProvider()
	}
	t := &Tracer{tracer: tp.Tracer(ScopeName), common: o.attrs}
	t.messagingAttrs = slices.Clip(o.attrs)
	if o.messagingSystem != "" {
		t.messagingAttrs = append(t.messagingAttrs, semconv.MessagingSystemKey.String(o.messagingSystem))
	}
	return t, nil
}

// StartClaim opens a "reliar.outbox.claim" span, a child of ctx's span.
func (t *Tracer) StartClaim(ctx context.Context, worker string, requested int) (context.Context, outbox.Span) {
	ctx, s := t.tracer.Start(ctx, ClaimSpanName,
		trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(keyWorkerID.String(worker), keyClaimRequested.Int(requested)),
		trace.WithAttributes(t.common...))
	return ctx, span{s}
}

// StartOutcomeWrite opens a "reliar.outbox.outcome" span around one store
// call recording the outcomes of rows messages, a child of ctx's span. op
// is the write, "complete" or "fail"; it becomes messaging.operation.name,
// with messaging.operation.type "settle" (the messages' fate is recorded)
// and messaging.batch.message_count rows.
func (t *Tracer) StartOutcomeWrite(ctx context.Context, op string, rows int) (context.Context, outbox.Span) {
	ctx, s := t.tracer.Start(ctx, OutcomeSpanName,
		trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(
			semconv.MessagingOperationTypeSettle,
			semconv.MessagingOperationName(validUTF8(op)),
			semconv.MessagingBatchMessageCount(rows)),
		trace.WithAttributes(t.messagingAttrs...))
	return ctx, span{s}
}

// StartPublish opens a "reliar.outbox.publish" span for env, a child of the
// trace context captured at enqueue when env carries a valid one (linking to
// ctx's span, if any), else a child of ctx's span.
func (t *Tracer) StartPublish(ctx context.Context, env *reliar.SerializedEnvelope) (context.Context, outbox.Span) {
	attrs := make([]attribute.KeyValue, 0, 7+len(t.messagingAttrs))
	attrs = append(attrs,
		semconv.MessagingMessageID(env.ID.String()),
		semconv.MessagingOperationTypeSend,
		keyMessageType.String(validUTF8(env.MessageType)),
		keyAttempt.Int(env.Attempt),
	)
	if c := env.Metadata.Correlation.ConversationID; c != (uuid.UUID{}) {
		attrs = append(attrs, semconv.MessagingMessageConversationID(c.String()))
	}
	if d := env.Metadata.Routing.Destination; d != "" {
		attrs = append(attrs, semconv.MessagingDestinationName(validUTF8(d)))
	}
	attrs = append(attrs, t.messagingAttrs...)
	opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindProducer), trace.WithAttributes(attrs...)}

	if enqueued := enqueueSpanContext(env.Metadata.Trace); enqueued.IsValid() {
		if current := trace.SpanContextFromContext(ctx); current.IsValid() {
			opts = append(opts, trace.WithLinks(trace.Link{SpanContext: current}))
		}
		ctx = trace.ContextWithRemoteSpanContext(ctx, enqueued)
	}
	ctx, s := t.tracer.Start(ctx, PublishSpanName, opts...)
	return ctx, span{s}
}

// enqueueSpanContext parses the W3C trace context captured at enqueue; the
// result is invalid when there is none or it does not parse.
func enqueueSpanContext(tr reliar.Trace) trace.SpanContext {
	if tr.Traceparent == "" {
		return trace.SpanContext{}
	}
	carrier := propagation.MapCarrier{traceparentHeader: tr.Traceparent}
	if tr.Tracestate != "" {
		carrier[tracestateHeader] = tr.Tracestate
	}
	return trace.SpanContextFromContext(propagation.TraceContext{}.Extract(context.Background(), carrier))
}

// span adapts an OpenTelemetry span to outbox.Span.
type span struct{ s trace.Span }

// End records err, when not nil, and ends the span.
func (s span) End(err error) {
	if err != nil {
		s.s.RecordError(err)
		s.s.SetStatus(codes.Error, outboxdriver.SanitizeError(err.Error()))
		s.s.SetAttributes(keyFailureKind.String(reliar.KindOf(err).String()))
	}
	s.s.End()
}
