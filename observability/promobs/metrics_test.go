package promobs_test

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/observability/promobs"
	"github.com/reliar/reliar/outbox"
)

var familyNames = []string{
	"reliar_outbox_abandoned_total",
	"reliar_outbox_breaker_open",
	"reliar_outbox_calls_given_up_total",
	"reliar_outbox_claimed_total",
	"reliar_outbox_dead",
	"reliar_outbox_dead_total",
	"reliar_outbox_due",
	"reliar_outbox_expired_pending",
	"reliar_outbox_invalid_batch_results_total",
	"reliar_outbox_lease_renewal_shortfall_total",
	"reliar_outbox_leased",
	"reliar_outbox_oldest_due_age_seconds",
	"reliar_outbox_outcome_write_failures_total",
	"reliar_outbox_pending",
	"reliar_outbox_publish_duration_seconds",
	"reliar_outbox_publish_failures_total",
	"reliar_outbox_published_total",
	"reliar_outbox_redelivery_outside_dedup_total",
	"reliar_outbox_released_at_drain_total",
	"reliar_outbox_retried_total",
	"reliar_outbox_scheduled",
}

func newMetrics(t *testing.T, opts ...promobs.Option) (*promobs.Metrics, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	m, err := promobs.New(reg, opts...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return m, reg
}

func TestNewDeclaresEveryFamily(t *testing.T) {
	t.Parallel()
	_, reg := newMetrics(t)
	got := slices.Sorted(maps.Keys(families(t, reg)))
	if !slices.Equal(got, familyNames) {
		t.Fatalf("families after New:\n got %v\nwant %v", got, familyNames)
	}
	for _, name := range familyNames {
		if n, err := testutil.GatherAndCount(reg, name); err != nil || n == 0 {
			t.Errorf("GatherAndCount(%s) = %d, %v; want at least one series", name, n, err)
		}
	}
	// Known label values exist from the start, at zero.
	for _, kind := range []string{"transient", "permanent"} {
		if v := value(t, reg, "reliar_outbox_retried_total", map[string]string{"kind": kind}); v != 0 {
			t.Errorf("retried_total{kind=%q} = %v before any call", kind, v)
		}
	}
	for _, reason := range []string{"permanent", "max_attempts", "max_claims", "expired", "undecodable"} {
		if v := value(t, reg, "reliar_outbox_dead_total", map[string]string{"reason": reason}); v != 0 {
			t.Errorf("dead_total{reason=%q} = %v before any call", reason, v)
		}
	}
}

func TestMetricsMove(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		call   func(m *promobs.Metrics)
		family string
		labels map[string]string
		want   float64
	}{
		{"claimed", func(m *promobs.Metrics) { m.Claimed(3); m.Claimed(2) }, "reliar_outbox_claimed_total", nil, 5},
		{"claimed ignores zero and negative", func(m *promobs.Metrics) { m.Claimed(0); m.Claimed(-4) }, "reliar_outbox_claimed_total", nil, 0},
		{"published", func(m *promobs.Metrics) {
			m.Published("orders.placed", time.Millisecond)
			m.Published("orders.placed", time.Millisecond)
		},
			"reliar_outbox_published_total", map[string]string{"message_type": "orders.placed"}, 2},
		{"publish failed", func(m *promobs.Metrics) { m.PublishFailed("orders.placed", reliar.FailurePermanent, time.Second) },
			"reliar_outbox_publish_failures_total", map[string]string{"message_type": "orders.placed", "kind": "permanent"}, 1},
		{"retried", func(m *promobs.Metrics) { m.Retried(reliar.FailureTransient) },
			"reliar_outbox_retried_total", map[string]string{"kind": "transient"}, 1},
		{"dead", func(m *promobs.Metrics) { m.Dead(outbox.DeadMaxAttempts, 4) },
			"reliar_outbox_dead_total", map[string]string{"reason": "max_attempts"}, 4},
		{"outcome write failed", func(m *promobs.Metrics) { m.OutcomeWriteFailed(2) }, "reliar_outbox_outcome_write_failures_total", nil, 2},
		{"lease shortfall", func(m *promobs.Metrics) { m.LeaseShortfall(6) }, "reliar_outbox_lease_renewal_shortfall_total", nil, 6},
		{"abandoned", func(m *promobs.Metrics) { m.Abandoned(1) }, "reliar_outbox_abandoned_total", nil, 1},
		{"released at drain", func(m *promobs.Metrics) { m.ReleasedAtDrain(7) }, "reliar_outbox_released_at_drain_total", nil, 7},
		{"redelivery outside dedup", func(m *promobs.Metrics) { m.RedeliveryOutsideDedup(2) }, "reliar_outbox_redelivery_outside_dedup_total", nil, 2},
		{"call given up", func(m *promobs.Metrics) { m.CallGivenUp("publish"); m.CallGivenUp("publish") }, "reliar_outbox_calls_given_up_total", map[string]string{"call": "publish"}, 2},
		{"unknown call given up", func(m *promobs.Metrics) { m.CallGivenUp("weird\xff") }, "reliar_outbox_calls_given_up_total", map[string]string{"call": "other"}, 1},
		{"invalid batch results", func(m *promobs.Metrics) { m.InvalidBatchResults(512) }, "reliar_outbox_invalid_batch_results_total", nil, 1},
		{"breaker open", func(m *promobs.Metrics) { m.BreakerOpen(true) }, "reliar_outbox_breaker_open", nil, 1},
		{"breaker closed again", func(m *promobs.Metrics) { m.BreakerOpen(true); m.BreakerOpen(false) }, "reliar_outbox_breaker_open", nil, 0},
	}
	stats := outbox.Stats{Pending: 10, Due: 4, Leased: 3, Scheduled: 2, ExpiredPending: 1, Dead: 5, OldestDueAge: 1500 * time.Millisecond}
	for _, g := range []struct {
		family string
		want   float64
	}{
		{"reliar_outbox_pending", 10}, {"reliar_outbox_due", 4}, {"reliar_outbox_leased", 3}, {"reliar_outbox_scheduled", 2},
		{"reliar_outbox_expired_pending", 1}, {"reliar_outbox_dead", 5}, {"reliar_outbox_oldest_due_age_seconds", 1.5},
	} {
		tests = append(tests, struct {
			name   string
			call   func(m *promobs.Metrics)
			family string
			labels map[string]string
			want   float64
		}{"stats " + g.family, func(m *promobs.Metrics) { m.Stats(stats) }, g.family, nil, g.want})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m, reg := newMetrics(t)
			tt.call(m)
			if got := value(t, reg, tt.family, tt.labels); got != tt.want {
				t.Fatalf("%s%v = %v, want %v", tt.family, tt.labels, got, tt.want)
			}
		})
	}
}

func TestPublishDurationObservesEveryCall(t *testing.T) {
	t.Parallel()
	m, reg := newMetrics(t)
	m.Published("a", 2*time.Millisecond)
	m.PublishFailed("a", reliar.FailureTransient, 3*time.Second)
	h := sample(t, reg, "reliar_outbox_publish_duration_seconds", map[string]string{"message_type": "a"}).GetHistogram()
	if h.GetSampleCount() != 2 || math.Abs(h.GetSampleSum()-3.002) > 1e-9 {
		t.Fatalf("histogram count %d sum %v, want 2 and 3.002", h.GetSampleCount(), h.GetSampleSum())
	}
	bounds := make([]float64, 0, len(h.GetBucket()))
	for _, b := range h.GetBucket() {
		bounds = append(bounds, b.GetUpperBound())
	}
	if !slices.Equal(bounds, promobs.DefaultBuckets) {
		t.Fatalf("buckets %v, want %v", bounds, promobs.DefaultBuckets)
	}
	if bounds[0] != 0.0005 || bounds[len(bounds)-1] != 10 {
		t.Fatalf("default buckets span %v..%v, want 0.0005..10", bounds[0], bounds[len(bounds)-1])
	}
}

func TestWithBuckets(t *testing.T) {
	t.Parallel()
	m, reg := newMetrics(t, promobs.WithBuckets(0.1, 1))
	m.Published("a", 500*time.Millisecond)
	h := sample(t, reg, "reliar_outbox_publish_duration_seconds", map[string]string{"message_type": "a"}).GetHistogram()
	if n := len(h.GetBucket()); n != 2 {
		t.Fatalf("%d buckets, want 2", n)
	}
	if c := h.GetBucket()[1].GetCumulativeCount(); c != 1 {
		t.Fatalf("bucket le=1 counts %d, want 1", c)
	}
}

func TestMessageTypeCap(t *testing.T) {
	t.Parallel()
	m, reg := newMetrics(t, promobs.WithMaxMessageTypes(2))
	for _, typ := range []string{"a", "b", "c", "a", "d", "b"} {
		m.Published(typ, time.Millisecond)
	}
	m.PublishFailed("e", reliar.FailureTransient, time.Millisecond)
	want := map[string]float64{"a": 2, "b": 2, promobs.OtherMessageType: 2}
	for typ, n := range want {
		if got := value(t, reg, "reliar_outbox_published_total", map[string]string{"message_type": typ}); got != n {
			t.Errorf("published_total{message_type=%q} = %v, want %v", typ, got, n)
		}
	}
	if n := seriesCount(t, reg, "reliar_outbox_published_total"); n != 3 {
		t.Errorf("published_total has %d series, want 3 (a, b, other)", n)
	}
	if got := value(t, reg, "reliar_outbox_publish_failures_total", map[string]string{"message_type": "other", "kind": "transient"}); got != 1 {
		t.Errorf("publish_failures_total{other,transient} = %v, want 1", got)
	}
	if n := seriesCount(t, reg, "reliar_outbox_publish_duration_seconds"); n != 3 {
		t.Errorf("publish_duration_seconds has %d series, want 3", n)
	}
}

func TestDeclaredMessageTypes(t *testing.T) {
	t.Parallel()
	m, reg := newMetrics(t, promobs.WithMaxMessageTypes(1), promobs.WithMessageTypes("orders.placed", "orders.cancelled"))
	// Declared types have series before any publish, past the cap too.
	for _, typ := range []string{"orders.placed", "orders.cancelled"} {
		if v := value(t, reg, "reliar_outbox_published_total", map[string]string{"message_type": typ}); v != 0 {
			t.Fatalf("published_total{%s} = %v before any publish", typ, v)
		}
	}
	m.Published("orders.cancelled", time.Millisecond)
	m.Published("orders.shipped", time.Millisecond)
	if v := value(t, reg, "reliar_outbox_published_total", map[string]string{"message_type": "orders.cancelled"}); v != 1 {
		t.Errorf("declared type counted %v, want 1", v)
	}
	if v := value(t, reg, "reliar_outbox_published_total", map[string]string{"message_type": "other"}); v != 1 {
		t.Errorf("undeclared type past the cap counted under other %v times, want 1", v)
	}
}

func TestMessageTypeCapConcurrent(t *testing.T) {
	t.Parallel()
	const max = 10
	m, reg := newMetrics(t, promobs.WithMaxMessageTypes(max))
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				m.Published(fmt.Sprintf("type-%d", (g*50+i)%40), time.Microsecond)
			}
		})
	}
	wg.Wait()
	if n := seriesCount(t, reg, "reliar_outbox_published_total"); n != max+1 {
		t.Fatalf("published_total has %d series, want %d types and other", n, max)
	}
	total := 0.0
	for _, s := range families(t, reg)["reliar_outbox_published_total"].GetMetric() {
		total += s.GetCounter().GetValue()
	}
	if total != 400 {
		t.Fatalf("published_total sums to %v, want 400", total)
	}
}

func TestInvalidUTF8MessageType(t *testing.T) {
	t.Parallel()
	m, reg := newMetrics(t)
	m.Published("bad\xffname", time.Millisecond)
	m.Dead(outbox.DeadReason("odd\xfe"), 1)
	if v := value(t, reg, "reliar_outbox_published_total", map[string]string{"message_type": "bad\uFFFDname"}); v != 1 {
		t.Fatalf("published_total for a repaired type = %v, want 1", v)
	}
	if v := value(t, reg, "reliar_outbox_dead_total", map[string]string{"reason": "odd\uFFFD"}); v != 1 {
		t.Fatalf("dead_total for a repaired reason = %v, want 1", v)
	}
}

func TestDoubleRegistration(t *testing.T) {
	t.Parallel()
	m, reg := newMetrics(t)
	_, err := promobs.New(reg)
	var already prometheus.AlreadyRegisteredError
	if !errors.As(err, &already) {
		t.Fatalf("second New on one registry: err = %v, want an AlreadyRegisteredError", err)
	}
	if !strings.Contains(err.Error(), "reliar prometheus: register outbox metrics") {
		t.Errorf("error %q does not say what failed", err)
	}
	// The first Metrics still works.
	m.Claimed(1)
	if v := value(t, reg, "reliar_outbox_claimed_total", nil); v != 1 {
		t.Fatalf("claimed_total = %v after a failed second New, want 1", v)
	}
}

func TestConstLabelsShareARegistry(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewPedanticRegistry()
	a, err := promobs.New(reg, promobs.WithConstLabels(prometheus.Labels{"table": "a"}))
	if err != nil {
		t.Fatalf("New(table=a): %v", err)
	}
	b, err := promobs.New(reg, promobs.WithConstLabels(prometheus.Labels{"table": "b"}))
	if err != nil {
		t.Fatalf("New(table=b): %v", err)
	}
	a.Claimed(1)
	b.Claimed(2)
	for table, want := range map[string]float64{"a": 1, "b": 2} {
		if v := value(t, reg, "reliar_outbox_claimed_total", map[string]string{"table": table}); v != want {
			t.Errorf("claimed_total{table=%q} = %v, want %v", table, v, want)
		}
	}
	if _, err := promobs.New(reg, promobs.WithConstLabels(prometheus.Labels{"table": "a"})); err == nil {
		t.Fatal("New with table=a twice succeeded")
	}
}

func TestFailedRegistrationRegistersNothing(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewPedanticRegistry()
	// A foreign collector already owns the last family's name.
	clash := prometheus.NewGauge(prometheus.GaugeOpts{Name: "reliar_outbox_breaker_open", Help: "Someone else's."})
	reg.MustRegister(clash)
	if _, err := promobs.New(reg); err == nil {
		t.Fatal("New over a clashing collector succeeded")
	}
	got := slices.Sorted(maps.Keys(families(t, reg)))
	if !slices.Equal(got, []string{"reliar_outbox_breaker_open"}) {
		t.Fatalf("families after a failed New: %v, want only the foreign one", got)
	}
}

func TestUnregister(t *testing.T) {
	t.Parallel()
	m, reg := newMetrics(t)
	if !m.Unregister() {
		t.Fatal("Unregister reported a family missing")
	}
	if got := families(t, reg); len(got) != 0 {
		t.Fatalf("families after Unregister: %v", slices.Sorted(maps.Keys(got)))
	}
	if m.Unregister() {
		t.Fatal("second Unregister reported every family removed")
	}
	if _, err := promobs.New(reg); err != nil {
		t.Fatalf("New after Unregister: %v", err)
	}
}

func TestInvalidOptions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		reg  prometheus.Registerer
		opt  promobs.Option
	}{
		{"nil registerer", nil, nil},
		{"zero max types", prometheus.NewRegistry(), promobs.WithMaxMessageTypes(0)},
		{"negative max types", prometheus.NewRegistry(), promobs.WithMaxMessageTypes(-1)},
		{"no buckets", prometheus.NewRegistry(), promobs.WithBuckets()},
		{"decreasing buckets", prometheus.NewRegistry(), promobs.WithBuckets(1, 0.5)},
		{"repeated bucket", prometheus.NewRegistry(), promobs.WithBuckets(1, 1)},
		{"const label kind", prometheus.NewRegistry(), promobs.WithConstLabels(prometheus.Labels{"kind": "x"})},
		{"const label message_type", prometheus.NewRegistry(), promobs.WithConstLabels(prometheus.Labels{"message_type": "x"})},
		{"reserved const label", prometheus.NewRegistry(), promobs.WithConstLabels(prometheus.Labels{"__reserved": "x"})},
		{"empty const label name", prometheus.NewRegistry(), promobs.WithConstLabels(prometheus.Labels{"": "x"})},
		{"const label value not UTF-8", prometheus.NewRegistry(), promobs.WithConstLabels(prometheus.Labels{"table": "a\xff"})},
		{"empty declared type", prometheus.NewRegistry(), promobs.WithMessageTypes("orders.placed", "")},
		{"declared type other", prometheus.NewRegistry(), promobs.WithMessageTypes(promobs.OtherMessageType)},
		{"declared type not UTF-8", prometheus.NewRegistry(), promobs.WithMessageTypes("bad\xff")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m, err := promobs.New(tt.reg, tt.opt)
			if !errors.Is(err, promobs.ErrInvalidOption) || m != nil {
				t.Fatalf("New = %v, %v; want nil and ErrInvalidOption", m, err)
			}
		})
	}
}

func TestInvalidConstLabelNameFailsRegistration(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewPedanticRegistry()
	_, err := promobs.New(reg, promobs.WithConstLabels(prometheus.Labels{"__reserved": "x"}))
	if !errors.Is(err, promobs.ErrInvalidOption) {
		t.Fatalf("New with a reserved constant label name = %v, want ErrInvalidOption", err)
	}
	if got := families(t, reg); len(got) != 0 {
		t.Fatalf("families after a failed New: %v", slices.Sorted(maps.Keys(got)))
	}
}
