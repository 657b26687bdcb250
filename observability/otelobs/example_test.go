package otelobs_test

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/observability/otelobs"
	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/outbox/memstore"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// The publish span continues the trace of the request that enqueued the
// message: its parent is the traceparent recorded at enqueue.
func ExampleNewTracer() {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	tracer, err := otelobs.NewTracer(tp, otelobs.WithMessagingSystem("kafka"))
	if err != nil {
		panic(err)
	}

	env := &reliar.SerializedEnvelope{ID: reliar.NewMessageID(), MessageType: "orders.placed", Attempt: 1}
	env.Metadata.Trace.Traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

	_, span := tracer.StartPublish(context.Background(), env) // the dispatcher does this
	span.End(nil)

	s := rec.Ended()[0]
	fmt.Println(s.Name())
	fmt.Println("trace: ", s.SpanContext().TraceID())
	fmt.Println("parent:", s.Parent().SpanID())
	// Output:
	// reliar.outbox.publish
	// trace:  4bf92f3577b34da6a3ce929d0e0e4736
	// parent: 00f067aa0ba902b7
}

// Installed once at start-up, the extractor makes enqueue record the trace
// context of the span active in the enqueue's context.
func ExampleInstallTraceExtractor() {
	otelobs.InstallTraceExtractor(propagation.TraceContext{})
	defer reliar.SetTraceExtractor(nil)

	tid, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	sid, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	ctx := trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled,
	}))

	store, err := memstore.New()
	if err != nil {
		panic(err)
	}
	if _, err := store.Enqueue(ctx, reliar.NewMsg(orderPlaced{OrderID: "A-1"})); err != nil {
		panic(err)
	}
	batch, err := store.Acquire(context.Background(), outboxdriver.AcquireRequest{Worker: "w", BatchSize: 1, Lease: time.Minute})
	if err != nil {
		panic(err)
	}
	fmt.Println(batch.Records[0].Envelope.Metadata.Trace.Traceparent)
	// Output: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01
}

// NewMetrics creates the instruments on a meter; hand the result to the
// dispatcher with outbox.WithMetrics.
func ExampleNewMetrics() {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { _ = mp.Shutdown(context.Background()) }()

	m, err := otelobs.NewMetrics(mp.Meter("orders"))
	if err != nil {
		panic(err)
	}
	defer func() { _ = m.Close() }()

	m.Published("orders.placed", 4*time.Millisecond) // the dispatcher does this
	m.Stats(outbox.Stats{Pending: 12, Due: 5})

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		panic(err)
	}
	for _, met := range rm.ScopeMetrics[0].Metrics {
		switch d := met.Data.(type) {
		case metricdata.Sum[int64]:
			fmt.Println(met.Name, d.DataPoints[0].Value)
		case metricdata.Gauge[int64]:
			fmt.Println(met.Name, d.DataPoints[0].Value)
		}
	}
	// Unordered output:
	// reliar.outbox.published 1
	// reliar.outbox.pending 12
	// reliar.outbox.due 5
	// reliar.outbox.leased 0
	// reliar.outbox.scheduled 0
	// reliar.outbox.dead_rows 0
	// reliar.outbox.expired_pending 0
	// reliar.outbox.breaker.open 0
}
