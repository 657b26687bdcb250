package promobs

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox"
)

const (
	namespace = "reliar"
	subsystem = "outbox"
)

// knownKinds and knownReasons are the label values declared at construction.
var (
	knownKinds   = []reliar.FailureKind{reliar.FailureTransient, reliar.FailurePermanent}
	knownReasons = []outbox.DeadReason{outbox.DeadPermanent, outbox.DeadMaxAttempts, outbox.DeadMaxClaims, outbox.DeadExpired, outbox.DeadUndecodable}
)

// Metrics implements outbox.Metrics with Prometheus collectors. Make one
// with New; its methods are safe for concurrent use.
type Metrics struct {
	reg        prometheus.Registerer
	collectors []prometheus.Collector
	types      *typeCap

	claimed                prometheus.Counter
	published              *prometheus.CounterVec
	publishFailures        *prometheus.CounterVec
	retried                *prometheus.CounterVec
	dead                   *prometheus.CounterVec
	outcomeWriteFailures   prometheus.Counter
	leaseShortfall         prometheus.Counter
	abandoned              prometheus.Counter
	releasedAtDrain        prometheus.Counter
	redeliveryOutsideDedup prometheus.Counter
	callsGivenUp           *prometheus.CounterVec
	invalidBatchResults    prometheus.Counter
	publishDuration        *prometheus.HistogramVec

	pending        prometheus.Gauge
	due            prometheus.Gauge
	leased         prometheus.Gauge
	scheduled      prometheus.Gauge
	deadRows       prometheus.Gauge
	expiredPending prometheus.Gauge
	oldestDueAge   prometheus.Gauge
	breakerOpen    prometheus.Gauge

	tenantMu           sync.Mutex          // one Tenants call at a time
	tenants            map[string]struct{} // the tenant_id values set, under tenantMu
	tenantDue          *prometheus.GaugeVec
	tenantOldestDueAge *prometheus.GaugeVec
}

var _ outbox.Metrics = (*Metrics)(nil)

// New creates every reliar_outbox_* family and registers it with reg. It
// fails, registering nothing, when reg is nil, an option is invalid
// (ErrInvalidOption) or a family cannot be registered — for example because
// reg already holds the same families with the same constant labels; that
// error wraps the registry's, so errors.As finds a
// prometheus.AlreadyRegisteredError.
func New(reg prometheus.Registerer, opts ...Option) (*Metrics, error) {
	if reg == nil {
		return nil, fmt.Errorf("%w: nil Registerer", ErrInvalidOption)
	}
	cfg := defaultConfig()
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	m := newMetrics(cfg)
	m.reg = reg
	if err := m.register(); err != nil {
		return nil, err
	}
	m.declare(cfg.messageTypes)
	return m, nil
}

func newMetrics(cfg config) *Metrics {
	opts := func(name, help string) prometheus.Opts {
		return prometheus.Opts{Namespace: namespace, Subsystem: subsystem, Name: name, Help: help, ConstLabels: cfg.constLabels}
	}
	counter := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts(opts(name, help)))
	}
	counterVec := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts(opts(name, help)), labels)
	}
	gauge := func(name, help string) prometheus.Gauge {
		return prometheus.NewGauge(prometheus.GaugeOpts(opts(name, help)))
	}
	m := &Metrics{
		types:                  newTypeCap(cfg.maxMessageTypes, cfg.messageTypes),
		claimed:                counter("claimed_total", "Rows returned by claims."),
		published:              counterVec("published_total", "Messages published, by message type.", "message_type"),
		publishFailures:        counterVec("publish_failures_total", "Failed publish calls, by message type and failure kind.", "message_type", "kind"),
		retried:                counterVec("retried_total", "Failures scheduled for another attempt, by failure kind.", "kind"),
		dead:                   counterVec("dead_total", "Rows moved to dead, by reason.", "reason"),
		outcomeWriteFailures:   counter("outcome_write_failures_total", "Store calls recording outcomes that failed."),
		leaseShortfall:         counter("lease_renewal_shortfall_total", "Rows a lease renewal did not extend."),
		abandoned:              counter("abandoned_total", "Rows whose outcome could not be written for a whole lease, left to their lease."),
		releasedAtDrain:        counter("released_at_drain_total", "Rows released at shutdown."),
		redeliveryOutsideDedup: counter("redelivery_outside_dedup_total", "Redeliveries that fell outside the broker's deduplication window."),
		callsGivenUp:           counterVec("calls_given_up_total", "Publish and store calls that ignored their context past their deadline and were given up, by call.", "call"),
		invalidBatchResults:    counter("invalid_batch_results_total", "PublishBatch calls that returned a result slice of the wrong length (every row failed transiently)."),
		publishDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Subsystem: subsystem, Name: "publish_duration_seconds",
			Help:        "Duration of publish calls, successful or not, by message type.",
			ConstLabels: cfg.constLabels, Buckets: cfg.buckets,
		}, []string{"message_type"}),
		pending:        gauge("pending", "Rows not yet published nor dead: due, leased, scheduled and expired pending."),
		due:            gauge("due", "Rows claimable now."),
		leased:         gauge("leased", "Rows held by a live lease."),
		scheduled:      gauge("scheduled", "Rows that become due later."),
		deadRows:       gauge("dead", "Dead rows awaiting an operator."),
		expiredPending: gauge("expired_pending", "Pending rows past their expiry awaiting the expiry sweep."),
		oldestDueAge:   gauge("oldest_due_age_seconds", "How long the oldest due row has been due; 0 when none."),
		breakerOpen:    gauge("breaker_open", "1 while the circuit breaker holds claims back, else 0."),
		tenantDue: prometheus.NewGaugeVec(prometheus.GaugeOpts(opts("tenant_due",
			"Rows claimable now, by tenant, for the tenants whose due rows have waited longest (Tenants).")), []string{"tenant_id"}),
		tenantOldestDueAge: prometheus.NewGaugeVec(prometheus.GaugeOpts(opts("tenant_oldest_due_age_seconds",
			"How long a tenant's oldest due row has been due, for the tenants whose due rows have waited longest (Tenants).")), []string{"tenant_id"}),
	}
	m.collectors = []prometheus.Collector{
		m.claimed, m.published, m.publishFailures, m.retried, m.dead,
		m.outcomeWriteFailures, m.leaseShortfall, m.abandoned, m.releasedAtDrain,
		m.redeliveryOutsideDedup, m.callsGivenUp, m.invalidBatchResults, m.publishDuration,
		m.pending, m.due, m.leased, m.scheduled, m.deadRows, m.expiredPending,
		m.oldestDueAge, m.breakerOpen, m.tenantDue, m.tenantOldestDueAge,
	}
	return m
}

// register registers every collector, or none.
func (m *Metrics) register() error {
	for i, c := range m.collectors {
		if err := m.reg.Register(c); err != nil {
			for _, done := range m.collectors[:i] {
				m.reg.Unregister(done)
			}
			return fmt.Errorf("reliar prometheus: register outbox metrics: %w", err)
		}
	}
	return nil
}

// declare creates the children whose label values are known, so that every
// family shows in a scrape before its first measurement.
func (m *Metrics) declare(types []string) {
	for _, t := range append([]string{OtherMessageType}, types...) {
		t = labelValue(t)
		m.published.WithLabelValues(t)
		m.publishDuration.WithLabelValues(t)
		for _, k := range knownKinds {
			m.publishFailures.WithLabelValues(t, k.String())
		}
	}
	for _, k := range knownKinds {
		m.retried.WithLabelValues(k.String())
	}
	for _, r := range knownReasons {
		m.dead.WithLabelValues(string(r))
	}
	for _, c := range knownCalls {
		m.callsGivenUp.WithLabelValues(c)
	}
}

// knownCalls are the calls the dispatcher can give up (Metrics.CallGivenUp).
var knownCalls = []string{"publish", "claim", "outcome", "renew", "release", "stats", "subscribe"}

// Unregister removes every family from the Registerer New was given. It
// reports whether all of them were registered.
func (m *Metrics) Unregister() bool {
	all := true
	for _, c := range m.collectors {
		all = m.reg.Unregister(c) && all
	}
	return all
}

// Claimed counts rows returned by claims.
func (m *Metrics) Claimed(n int) { add(m.claimed, n) }

// Published counts one published message and observes the publish call's
// duration.
func (m *Metrics) Published(messageType string, took time.Duration) {
	t := m.types.label(messageType)
	m.published.WithLabelValues(t).Inc()
	m.publishDuration.WithLabelValues(t).Observe(took.Seconds())
}

// PublishFailed counts one failed publish call and observes its duration.
func (m *Metrics) PublishFailed(messageType string, kind reliar.FailureKind, took time.Duration) {
	t := m.types.label(messageType)
	m.publishFailures.WithLabelValues(t, kind.String()).Inc()
	m.publishDuration.WithLabelValues(t).Observe(took.Seconds())
}

// Retried counts a failure scheduled for another attempt.
func (m *Metrics) Retried(kind reliar.FailureKind) { m.retried.WithLabelValues(kind.String()).Inc() }

// Dead counts n rows moved to dead for reason.
func (m *Metrics) Dead(reason outbox.DeadReason, n int) {
	add(m.dead.WithLabelValues(labelValue(string(reason))), n)
}

// OutcomeWriteFailed counts n failed outcome writes.
func (m *Metrics) OutcomeWriteFailed(n int) { add(m.outcomeWriteFailures, n) }

// LeaseShortfall counts n rows a lease renewal did not extend.
func (m *Metrics) LeaseShortfall(n int) { add(m.leaseShortfall, n) }

// CallGivenUp counts a call the dispatcher stopped waiting for. A call name
// outside the known set is counted as "other".
func (m *Metrics) CallGivenUp(call string) {
	if !slices.Contains(knownCalls, call) {
		call = "other"
	}
	m.callsGivenUp.WithLabelValues(call).Inc()
}

// InvalidBatchResults counts a PublishBatch call that returned the wrong
// number of results.
func (m *Metrics) InvalidBatchResults(int) { m.invalidBatchResults.Inc() }

// Abandoned counts n rows left to their lease.
func (m *Metrics) Abandoned(n int) { add(m.abandoned, n) }

// ReleasedAtDrain counts n rows released at shutdown.
func (m *Metrics) ReleasedAtDrain(n int) { add(m.releasedAtDrain, n) }

// RedeliveryOutsideDedup counts n messages published again after the
// broker's deduplication window had passed, so that a consumer may see them
// twice.
func (m *Metrics) RedeliveryOutsideDedup(n int) { add(m.redeliveryOutsideDedup, n) }

// BreakerOpen sets the breaker_open gauge to 1 when open, else 0.
func (m *Metrics) BreakerOpen(open bool) {
	if open {
		m.breakerOpen.Set(1)
		return
	}
	m.breakerOpen.Set(0)
}

// Stats sets the row gauges from s.
func (m *Metrics) Stats(s outbox.Stats) {
	m.pending.Set(float64(s.Pending))
	m.due.Set(float64(s.Due))
	m.leased.Set(float64(s.Leased))
	m.scheduled.Set(float64(s.Scheduled))
	m.deadRows.Set(float64(s.Dead))
	m.expiredPending.Set(float64(s.ExpiredPending))
	m.oldestDueAge.Set(s.OldestDueAge.Seconds())
}

// add adds n to c, ignoring n <= 0: a counter panics when it goes down.
func add(c prometheus.Counter, n int) {
	if n > 0 {
		c.Add(float64(n))
	}
}
