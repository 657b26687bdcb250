package otelobs_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/reliar/reliar/observability/otelobs"
)

// TestOptionForTheOtherConstructor: an option that does not apply to a
// constructor makes it fail with ErrInvalidOption and an error naming the
// option and both constructors.
func TestOptionForTheOtherConstructor(t *testing.T) {
	t.Parallel()
	tp := sdktrace.NewTracerProvider()
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	mp := sdkmetric.NewMeterProvider()
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })

	tr, err := otelobs.NewTracer(tp, otelobs.WithMaxMessageTypes(5))
	if !errors.Is(err, otelobs.ErrInvalidOption) || tr != nil {
		t.Fatalf("NewTracer(WithMaxMessageTypes) = %v, %v; want nil and ErrInvalidOption", tr, err)
	}
	for _, want := range []string{"WithMaxMessageTypes", "NewMetrics", "NewTracer"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}

	m, err := otelobs.NewMetrics(mp.Meter("test"), otelobs.WithMessagingSystem("kafka"))
	if !errors.Is(err, otelobs.ErrInvalidOption) || m != nil {
		t.Fatalf("NewMetrics(WithMessagingSystem) = %v, %v; want nil and ErrInvalidOption", m, err)
	}
	for _, want := range []string{"WithMessagingSystem", "NewMetrics", "NewTracer"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
}

func TestInvalidTracerOptions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		opt  otelobs.Option
	}{
		{"empty messaging system", otelobs.WithMessagingSystem("")},
		{"invalid UTF-8 messaging system", otelobs.WithMessagingSystem("kaf\xffka")},
		{"reserved attribute", otelobs.WithAttributes(attribute.String("reliar.attempt", "x"))},
		{"messaging attribute", otelobs.WithAttributes(attribute.String("messaging.system", "kafka"))},
		{"invalid attribute", otelobs.WithAttributes(attribute.KeyValue{Key: "", Value: attribute.StringValue("x")})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tr, err := otelobs.NewTracer(nil, nil, tt.opt)
			if !errors.Is(err, otelobs.ErrInvalidOption) || tr != nil {
				t.Fatalf("NewTracer = %v, %v; want nil and ErrInvalidOption", tr, err)
			}
		})
	}
}

// TestTracerAttributes: WithAttributes puts its attributes on every span,
// next to the spans' own.
func TestTracerAttributes(t *testing.T) {
	t.Parallel()
	table := attribute.String("reliar.table", "orders_outbox")
	tr, rec, _ := newTracer(t, otelobs.WithAttributes(table), otelobs.WithMessagingSystem("nats"))
	_, s := tr.StartClaim(context.Background(), "w", 4)
	s.End(nil)
	_, s = tr.StartPublish(context.Background(), envelope("", ""))
	s.End(nil)
	ended := rec.Ended()
	if len(ended) != 2 {
		t.Fatalf("%d spans ended, want 2", len(ended))
	}
	for _, sp := range ended {
		if v := attrs(sp)["reliar.table"]; v.AsString() != "orders_outbox" {
			t.Errorf("%s: reliar.table = %q, want orders_outbox", sp.Name(), v.Emit())
		}
	}
	claim, publish := attrs(ended[0]), attrs(ended[1])
	if claim["reliar.worker.id"].AsString() != "w" {
		t.Errorf("claim attributes %v lost the worker id", ended[0].Attributes())
	}
	if publish["messaging.system"].AsString() != "nats" || publish["messaging.operation.type"].AsString() != "send" {
		t.Errorf("publish attributes %v lost the messaging ones", ended[1].Attributes())
	}
	if _, ok := claim["messaging.system"]; ok {
		t.Error("messaging.system on the claim span")
	}
}
