package otelobs_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/observability/otelobs"
	"github.com/reliar/reliar/outbox"
)

type meterFixture struct {
	m      *otelobs.Metrics
	reader *sdkmetric.ManualReader
}

func newMeter(t *testing.T, opts ...otelobs.Option) meterFixture {
	t.Helper()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() {
		if err := mp.Shutdown(context.Background()); err != nil {
			t.Errorf("MeterProvider.Shutdown: %v", err)
		}
	})
	m, err := otelobs.NewMetrics(mp.Meter("test"), opts...)
	if err != nil {
		t.Fatalf("NewMetrics: %v", err)
	}
	return meterFixture{m: m, reader: reader}
}

// collect returns the collected metrics by name.
func (f meterFixture) collect(t *testing.T) map[string]metricdata.Metrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := f.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatalf("Collect: %v", err)
	}
	out := make(map[string]metricdata.Metrics)
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			out[m.Name] = m
		}
	}
	return out
}

// point returns the value of the data point of metric name whose attributes
// are exactly want, and whether there is one.
func (f meterFixture) point(t *testing.T, name string, want ...attribute.KeyValue) (float64, bool) {
	t.Helper()
	m, ok := f.collect(t)[name]
	if !ok {
		return 0, false
	}
	set := attribute.NewSet(want...)
	switch d := m.Data.(type) {
	case metricdata.Sum[int64]:
		for _, p := range d.DataPoints {
			if p.Attributes.Equals(&set) {
				return float64(p.Value), true
			}
		}
	case metricdata.Gauge[int64]:
		for _, p := range d.DataPoints {
			if p.Attributes.Equals(&set) {
				return float64(p.Value), true
			}
		}
	case metricdata.Gauge[float64]:
		for _, p := range d.DataPoints {
			if p.Attributes.Equals(&set) {
				return p.Value, true
			}
		}
	case metricdata.Histogram[float64]:
		for _, p := range d.DataPoints {
			if p.Attributes.Equals(&set) {
				return float64(p.Count), true
			}
		}
	default:
		t.Fatalf("%s has unexpected data %T", name, m.Data)
	}
	return 0, false
}

func (f meterFixture) want(t *testing.T, name string, want float64, attrs ...attribute.KeyValue) {
	t.Helper()
	got, ok := f.point(t, name, attrs...)
	if !ok {
		t.Fatalf("%s%v: no data point", name, attrs)
	}
	if got != want {
		t.Fatalf("%s%v = %v, want %v", name, attrs, got, want)
	}
}

var (
	typeAttr      = attribute.Key("reliar.message_type")
	kindAttr      = attribute.Key("reliar.failure_kind")
	reasonAttr    = attribute.Key("reliar.dead_reason")
	instrumentSet = []string{
		"reliar.outbox.abandoned",
		"reliar.outbox.breaker.open",
		"reliar.outbox.claimed",
		"reliar.outbox.dead",
		"reliar.outbox.dead_rows",
		"reliar.outbox.due",
		"reliar.outbox.expired_pending",
		"reliar.outbox.lease_renewal.shortfall",
		"reliar.outbox.leased",
		"reliar.outbox.oldest_due.age",
		"reliar.outbox.outcome_write.failures",
		"reliar.outbox.pending",
		"reliar.outbox.publish.duration",
		"reliar.outbox.publish.failures",
		"reliar.outbox.published",
		"reliar.outbox.redelivery_outside_dedup",
		"reliar.outbox.released_at_drain",
		"reliar.outbox.retried",
		"reliar.outbox.scheduled",
	}
)

func callEveryMethod(m *otelobs.Metrics) {
	m.Claimed(1)
	m.Published("a", time.Millisecond)
	m.PublishFailed("a", reliar.FailureTransient, time.Millisecond)
	m.Retried(reliar.FailureTransient)
	m.Dead(outbox.DeadExpired, 1)
	m.OutcomeWriteFailed(1)
	m.LeaseShortfall(1)
	m.Abandoned(1)
	m.ReleasedAtDrain(1)
	m.RedeliveryOutsideDedup(1)
	m.BreakerOpen(false)
	m.Stats(outbox.Stats{})
}

func TestEveryInstrumentReports(t *testing.T) {
	t.Parallel()
	f := newMeter(t)
	callEveryMethod(f.m)
	got := make([]string, 0, len(instrumentSet))
	for name, m := range f.collect(t) {
		got = append(got, name)
		if m.Unit == "" && name != "reliar.outbox.breaker.open" {
			t.Errorf("%s has no unit", name)
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, instrumentSet) {
		t.Fatalf("instruments:\n got %v\nwant %v", got, instrumentSet)
	}
}

func TestMetricsMove(t *testing.T) {
	t.Parallel()
	stats := outbox.Stats{Pending: 10, Due: 4, Leased: 3, Scheduled: 2, ExpiredPending: 1, Dead: 5, OldestDueAge: 1500 * time.Millisecond}
	tests := []struct {
		name       string
		call       func(m *otelobs.Metrics)
		instrument string
		attrs      []attribute.KeyValue
		want       float64
	}{
		{"claimed", func(m *otelobs.Metrics) { m.Claimed(3); m.Claimed(2); m.Claimed(-1) }, "reliar.outbox.claimed", nil, 5},
		{"published", func(m *otelobs.Metrics) { m.Published("a", time.Millisecond); m.Published("a", time.Millisecond) },
			"reliar.outbox.published", []attribute.KeyValue{typeAttr.String("a")}, 2},
		{"publish failures", func(m *otelobs.Metrics) { m.PublishFailed("a", reliar.FailurePermanent, time.Second) },
			"reliar.outbox.publish.failures", []attribute.KeyValue{typeAttr.String("a"), kindAttr.String("permanent")}, 1},
		{"duration counts successes and failures", func(m *otelobs.Metrics) {
			m.Published("a", time.Millisecond)
			m.PublishFailed("a", reliar.FailureTransient, time.Second)
		}, "reliar.outbox.publish.duration", []attribute.KeyValue{typeAttr.String("a")}, 2},
		{"retried", func(m *otelobs.Metrics) { m.Retried(reliar.FailureTransient) },
			"reliar.outbox.retried", []attribute.KeyValue{kindAttr.String("transient")}, 1},
		{"dead", func(m *otelobs.Metrics) { m.Dead(outbox.DeadMaxClaims, 4); m.Dead(outbox.DeadMaxClaims, 0) },
			"reliar.outbox.dead", []attribute.KeyValue{reasonAttr.String("max_claims")}, 4},
		{"outcome write failures", func(m *otelobs.Metrics) { m.OutcomeWriteFailed(2) }, "reliar.outbox.outcome_write.failures", nil, 2},
		{"lease shortfall", func(m *otelobs.Metrics) { m.LeaseShortfall(6) }, "reliar.outbox.lease_renewal.shortfall", nil, 6},
		{"abandoned", func(m *otelobs.Metrics) { m.Abandoned(1) }, "reliar.outbox.abandoned", nil, 1},
		{"released at drain", func(m *otelobs.Metrics) { m.ReleasedAtDrain(7) }, "reliar.outbox.released_at_drain", nil, 7},
		{"redelivery outside dedup", func(m *otelobs.Metrics) { m.RedeliveryOutsideDedup(2) }, "reliar.outbox.redelivery_outside_dedup", nil, 2},
		{"breaker closed at start", func(m *otelobs.Metrics) {}, "reliar.outbox.breaker.open", nil, 0},
		{"breaker open", func(m *otelobs.Metrics) { m.BreakerOpen(true) }, "reliar.outbox.breaker.open", nil, 1},
		{"breaker closed again", func(m *otelobs.Metrics) { m.BreakerOpen(true); m.BreakerOpen(false) }, "reliar.outbox.breaker.open", nil, 0},
		{"pending", func(m *otelobs.Metrics) { m.Stats(stats) }, "reliar.outbox.pending", nil, 10},
		{"due", func(m *otelobs.Metrics) { m.Stats(stats) }, "reliar.outbox.due", nil, 4},
		{"leased", func(m *otelobs.Metrics) { m.Stats(stats) }, "reliar.outbox.leased", nil, 3},
		{"scheduled", func(m *otelobs.Metrics) { m.Stats(stats) }, "reliar.outbox.scheduled", nil, 2},
		{"expired pending", func(m *otelobs.Metrics) { m.Stats(stats) }, "reliar.outbox.expired_pending", nil, 1},
		{"dead rows", func(m *otelobs.Metrics) { m.Stats(stats) }, "reliar.outbox.dead_rows", nil, 5},
		{"oldest due age", func(m *otelobs.Metrics) { m.Stats(stats) }, "reliar.outbox.oldest_due.age", nil, 1.5},
		{"last stats win", func(m *otelobs.Metrics) { m.Stats(stats); m.Stats(outbox.Stats{Pending: 1}) }, "reliar.outbox.pending", nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newMeter(t)
			tt.call(f.m)
			f.want(t, tt.instrument, tt.want, tt.attrs...)
		})
	}
}

func TestPublishDurationBuckets(t *testing.T) {
	t.Parallel()
	f := newMeter(t)
	f.m.Published("a", 3*time.Millisecond)
	h, ok := f.collect(t)["reliar.outbox.publish.duration"].Data.(metricdata.Histogram[float64])
	if !ok || len(h.DataPoints) != 1 {
		t.Fatalf("publish.duration data %+v, want one histogram point", h)
	}
	p := h.DataPoints[0]
	if !slices.Equal(p.Bounds, otelobs.DefaultBuckets) {
		t.Errorf("bounds %v, want %v", p.Bounds, otelobs.DefaultBuckets)
	}
	if math.Abs(p.Sum-0.003) > 1e-12 {
		t.Errorf("sum %v, want 0.003 (seconds)", p.Sum)
	}
}

func TestGaugesSilentBeforeFirstStats(t *testing.T) {
	t.Parallel()
	f := newMeter(t)
	got := f.collect(t)
	for _, name := range []string{"reliar.outbox.pending", "reliar.outbox.oldest_due.age", "reliar.outbox.dead_rows"} {
		if m, ok := got[name]; ok {
			t.Errorf("%s reported %+v before any Stats", name, m.Data)
		}
	}
	if _, ok := got["reliar.outbox.breaker.open"]; !ok {
		t.Error("breaker.open silent before any call; want 0")
	}
}

func TestMessageTypeCap(t *testing.T) {
	t.Parallel()
	f := newMeter(t, otelobs.WithMaxMessageTypes(2))
	for _, typ := range []string{"a", "b", "c", "a", "d", "b"} {
		f.m.Published(typ, time.Millisecond)
	}
	for typ, n := range map[string]float64{"a": 2, "b": 2, otelobs.OtherMessageType: 2} {
		f.want(t, "reliar.outbox.published", n, typeAttr.String(typ))
	}
	if n := len(f.collect(t)["reliar.outbox.published"].Data.(metricdata.Sum[int64]).DataPoints); n != 3 {
		t.Fatalf("published has %d data points, want 3", n)
	}
}

func TestMessageTypeCapConcurrent(t *testing.T) {
	t.Parallel()
	const max = 10
	f := newMeter(t, otelobs.WithMaxMessageTypes(max))
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				f.m.Published(fmt.Sprintf("type-%d", (g*50+i)%40), time.Microsecond)
			}
		})
	}
	wg.Wait()
	points := f.collect(t)["reliar.outbox.published"].Data.(metricdata.Sum[int64]).DataPoints
	var total int64
	for _, p := range points {
		total += p.Value
	}
	if len(points) != max+1 || total != 400 {
		t.Fatalf("%d data points summing to %d, want %d and 400", len(points), total, max+1)
	}
}

func TestInvalidUTF8MessageType(t *testing.T) {
	t.Parallel()
	f := newMeter(t)
	f.m.Published("bad\xffname", time.Millisecond)
	f.want(t, "reliar.outbox.published", 1, typeAttr.String("bad\uFFFDname"))
}

func TestCommonAttributes(t *testing.T) {
	t.Parallel()
	table := attribute.String("reliar.table", "orders_outbox")
	f := newMeter(t, otelobs.WithAttributes(table))
	f.m.Claimed(1)
	f.m.Published("a", time.Millisecond)
	f.m.Dead(outbox.DeadExpired, 2)
	f.m.Stats(outbox.Stats{Due: 3})
	f.want(t, "reliar.outbox.claimed", 1, table)
	f.want(t, "reliar.outbox.published", 1, table, typeAttr.String("a"))
	f.want(t, "reliar.outbox.publish.duration", 1, table, typeAttr.String("a"))
	f.want(t, "reliar.outbox.dead", 2, table, reasonAttr.String("expired"))
	f.want(t, "reliar.outbox.due", 3, table)
	f.want(t, "reliar.outbox.breaker.open", 0, table)
}

func TestCloseStopsGauges(t *testing.T) {
	t.Parallel()
	f := newMeter(t)
	f.m.Stats(outbox.Stats{Pending: 4})
	if err := f.m.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, ok := f.point(t, "reliar.outbox.pending"); ok {
		t.Fatal("pending still reported after Close")
	}
	f.m.Claimed(2)
	f.want(t, "reliar.outbox.claimed", 2)
}

func TestInvalidMetricsOptions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		opt  otelobs.Option
	}{
		{"zero max types", otelobs.WithMaxMessageTypes(0)},
		{"negative max types", otelobs.WithMaxMessageTypes(-3)},
		{"reserved attribute", otelobs.WithAttributes(attribute.String("reliar.message_type", "x"))},
		{"reserved kind attribute", otelobs.WithAttributes(attribute.String("reliar.failure_kind", "x"))},
		{"invalid attribute", otelobs.WithAttributes(attribute.KeyValue{Key: "", Value: attribute.StringValue("x")})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m, err := otelobs.NewMetrics(sdkmetric.NewMeterProvider().Meter("test"), nil, tt.opt)
			if !errors.Is(err, otelobs.ErrInvalidOption) || m != nil {
				t.Fatalf("NewMetrics = %v, %v; want nil and ErrInvalidOption", m, err)
			}
		})
	}
}

func TestNewMetricsNilMeterUsesGlobal(t *testing.T) {
	t.Parallel()
	m, err := otelobs.NewMetrics(nil)
	if err != nil {
		t.Fatalf("NewMetrics(nil): %v", err)
	}
	callEveryMethod(m)
	if err := m.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}
