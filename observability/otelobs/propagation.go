package otelobs

import (
	"context"

	"go.opentelemetry.io/otel/propagation"

	"github.com/reliar/reliar"
)

// The W3C Trace Context header names, the carrier keys of reliar.Trace.
const (
	traceparentHeader = "traceparent"
	tracestateHeader  = "tracestate"
)

// TraceExtractor returns a reliar.TraceExtractor that injects the span
// context active in ctx through p into a map and keeps its traceparent and
// tracestate. p must write W3C Trace Context headers, alone or within a
// composite propagator; nil means propagation.TraceContext{}.
func TraceExtractor(p propagation.TextMapPropagator) reliar.TraceExtractor {
	if p == nil {
		p = propagation.TraceContext{}
	}
	return func(ctx context.Context) reliar.Trace {
		carrier := propagation.MapCarrier{}
		p.Inject(ctx, carrier)
		return reliar.Trace{Traceparent: carrier.Get(traceparentHeader), Tracestate: carrier.Get(tracestateHeader)}
	}
}

// InstallTraceExtractor makes every store's enqueue record the W3C trace
// context of the span active in its context, through TraceExtractor(p). It
// replaces the process-wide hook (reliar.SetTraceExtractor); call it once at
// start-up.
func InstallTraceExtractor(p propagation.TextMapPropagator) {
	reliar.SetTraceExtractor(TraceExtractor(p))
}
