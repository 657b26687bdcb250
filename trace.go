package reliar

import (
	"context"
	"sync/atomic"
)

// TraceExtractor reads the W3C trace context of the span active in ctx. The
// OpenTelemetry adapter installs one with [SetTraceExtractor]; the core has no
// tracing dependency of its own.
type TraceExtractor func(ctx context.Context) Trace

var traceExtractor atomic.Pointer[TraceExtractor]

// SetTraceExtractor installs the hook that stores call at enqueue to fill a
// message's Trace metadata from the context. Pass nil to remove it.
func SetTraceExtractor(f TraceExtractor) {
	if f == nil {
		traceExtractor.Store(nil)
		return
	}
	traceExtractor.Store(&f)
}

// TraceFromContext returns the trace context of ctx through the installed
// extractor, or a zero Trace when none is installed.
func TraceFromContext(ctx context.Context) Trace {
	if f := traceExtractor.Load(); f != nil {
		return (*f)(ctx)
	}
	return Trace{}
}
