package otelobs_test

import (
	"errors"
	"testing"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/reliar/reliar/observability/otelobs"
)

var errMeter = errors.New("meter refused")

// failingMeter refuses one kind of call.
type failingMeter struct {
	noop.Meter
	fail string
}

func (m failingMeter) Int64Counter(name string, opts ...metric.Int64CounterOption) (metric.Int64Counter, error) {
	c, _ := m.Meter.Int64Counter(name, opts...)
	if m.fail == "counter" && name == "reliar.outbox.retried" {
		return c, errMeter
	}
	return c, nil
}

func (m failingMeter) Float64Histogram(name string, opts ...metric.Float64HistogramOption) (metric.Float64Histogram, error) {
	h, _ := m.Meter.Float64Histogram(name, opts...)
	if m.fail == "histogram" {
		return h, errMeter
	}
	return h, nil
}

func (m failingMeter) Int64ObservableGauge(name string, opts ...metric.Int64ObservableGaugeOption) (metric.Int64ObservableGauge, error) {
	g, _ := m.Meter.Int64ObservableGauge(name, opts...)
	if m.fail == "gauge" {
		return g, errMeter
	}
	return g, nil
}

func (m failingMeter) RegisterCallback(f metric.Callback, instruments ...metric.Observable) (metric.Registration, error) {
	if m.fail == "callback" {
		return nil, errMeter
	}
	return m.Meter.RegisterCallback(f, instruments...)
}

func TestNewMetricsReportsMeterErrors(t *testing.T) {
	t.Parallel()
	for _, fail := range []string{"counter", "histogram", "gauge", "callback"} {
		t.Run(fail, func(t *testing.T) {
			t.Parallel()
			m, err := otelobs.NewMetrics(failingMeter{fail: fail})
			if !errors.Is(err, errMeter) || m != nil {
				t.Fatalf("NewMetrics = %v, %v; want nil and the meter's error", m, err)
			}
		})
	}
}
