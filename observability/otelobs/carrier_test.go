package otelobs_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/reliar/reliar/observability/otelobs"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

const (
	traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	tracestate  = "vendor=value"
)

// recordHeader has the shape of franz-go's kgo.RecordHeader.
type recordHeader struct {
	Key   string
	Value []byte
}

// extracted returns the span context the W3C propagator finds in c.
func extracted(c propagation.TextMapCarrier) trace.SpanContext {
	return trace.SpanContextFromContext(propagation.TraceContext{}.Extract(context.Background(), c))
}

func checkExtracted(t *testing.T, name string, c propagation.TextMapCarrier) {
	t.Helper()
	sc := extracted(c)
	if !sc.IsValid() || sc.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" || sc.SpanID().String() != "00f067aa0ba902b7" {
		t.Errorf("%s: extracted %v, want the trace of %s", name, sc, traceparent)
	}
	if got := sc.TraceState().String(); got != tracestate {
		t.Errorf("%s: trace state %q, want %q", name, got, tracestate)
	}
}

// The carriers read the headers the publishers send: lower-case
// traceparent and tracestate, and other spellings too.
func TestCarriersExtract(t *testing.T) {
	nats := map[string][]string{"traceparent": {traceparent}, "tracestate": {tracestate}, "ce-id": {"x"}}
	checkExtracted(t, "NATS", otelobs.NATSCarrier(nats))
	checkExtracted(t, "NATS, other case", otelobs.NATSCarrier(map[string][]string{"Traceparent": {traceparent}, "TRACESTATE": {tracestate}}))
	checkExtracted(t, "AMQP table", otelobs.TableCarrier(map[string]any{"traceparent": traceparent, "tracestate": []byte(tracestate)}))
	checkExtracted(t, "Redis fields", otelobs.TableCarrier(map[string]any{"traceparent": traceparent, "tracestate": tracestate, "payload": "{}"}))
	kafka := []recordHeader{{"ce_id", []byte("x")}, {"traceparent", []byte("00-00000000000000000000000000000001-0000000000000001-01")},
		{"traceparent", []byte(traceparent)}, {"tracestate", []byte(tracestate)}}
	checkExtracted(t, "Kafka, the last of repeated headers", otelobs.KafkaCarrier(&kafka))
	h := http.Header{}
	h.Set("traceparent", traceparent)
	h.Set("tracestate", tracestate)
	checkExtracted(t, "HTTP", propagation.HeaderCarrier(h))
}

// Why NATS needs a carrier of its own: its header names are
// case-sensitive, and propagation.HeaderCarrier looks for the canonical
// "Traceparent" only.
func TestHeaderCarrierMissesNATSHeaders(t *testing.T) {
	nats := http.Header(map[string][]string{"traceparent": {traceparent}, "tracestate": {tracestate}})
	if sc := extracted(propagation.HeaderCarrier(nats)); sc.IsValid() {
		t.Fatalf("propagation.HeaderCarrier found %v in NATS headers: the NATS carrier would be pointless", sc)
	}
}

// Injecting through a carrier and extracting through the same kind gives
// the trace back, and replaces what was there.
func TestCarriersInject(t *testing.T) {
	sc := extracted(propagation.MapCarrier{"traceparent": traceparent, "tracestate": tracestate})
	ctx := trace.ContextWithSpanContext(context.Background(), sc)
	nats := map[string][]string{"Traceparent": {"stale"}}
	table := map[string]any{}
	kafka := []recordHeader{{"traceparent", []byte("stale")}, {"x", []byte("y")}}
	for name, c := range map[string]propagation.TextMapCarrier{
		"NATS":  otelobs.NATSCarrier(nats),
		"table": otelobs.TableCarrier(table),
		"Kafka": otelobs.KafkaCarrier(&kafka),
	} {
		propagation.TraceContext{}.Inject(ctx, c)
		checkExtracted(t, name, c)
	}
	if len(nats["Traceparent"]) != 0 || nats["traceparent"][0] != traceparent {
		t.Errorf("NATS headers after inject: %v", nats)
	}
	if len(kafka) != 3 {
		t.Errorf("Kafka headers after inject: %d, want x, traceparent and tracestate once each", len(kafka))
	}
}
