package otelobs_test

import (
	"context"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/reliar/reliar/observability/otelobs"
)

// BenchmarkPublished measures the per-message metrics cost on the
// dispatcher's hot path.
func BenchmarkPublished(b *testing.B) {
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	b.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	m, err := otelobs.NewMetrics(mp.Meter("bench"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.Published("orders.placed", time.Millisecond)
		}
	})
}

// BenchmarkStartPublish measures opening and ending a publish span parented
// by an enqueue traceparent.
func BenchmarkStartPublish(b *testing.B) {
	tp := sdktrace.NewTracerProvider()
	b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	tr, err := otelobs.NewTracer(tp)
	if err != nil {
		b.Fatal(err)
	}
	env := envelope("00-"+enqueueTraceID+"-"+enqueueSpanID+"-01", "")
	b.ReportAllocs()
	for b.Loop() {
		_, s := tr.StartPublish(context.Background(), env)
		s.End(nil)
	}
}
