package cetest

import (
	"context"
	"fmt"

	"github.com/reliar/reliar"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// CheckTrace extracts the W3C trace context from c with OpenTelemetry's
// TraceContext propagator and compares it with the envelope's.
func CheckTrace(c propagation.TextMapCarrier, sent *reliar.SerializedEnvelope) error {
	want := trace.SpanContextFromContext(propagation.TraceContext{}.Extract(context.Background(),
		propagation.MapCarrier{"traceparent": sent.Metadata.Trace.Traceparent, "tracestate": sent.Metadata.Trace.Tracestate}))
	got := trace.SpanContextFromContext(propagation.TraceContext{}.Extract(context.Background(), c))
	switch {
	case !want.IsValid():
		return nil // nothing sent to find
	case !got.IsValid():
		return fmt.Errorf("the OpenTelemetry propagator finds no trace context (sent %s)", sent.Metadata.Trace.Traceparent)
	case !got.Equal(want):
		return fmt.Errorf("the OpenTelemetry propagator finds %v, want %v", got, want)
	}
	return nil
}
