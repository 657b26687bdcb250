package otelobs

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	global "go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox"
)

// ScopeName is the instrumentation scope of the meter and tracer taken from
// the global providers when NewMetrics or NewTracer is given nil.
const ScopeName = "github.com/reliar/reliar/observability/otelobs"

// The attribute keys of the metrics.
const (
	keyMessageType = attribute.Key("reliar.message_type")
	keyFailureKind = attribute.Key("reliar.failure_kind")
	keyDeadReason  = attribute.Key("reliar.dead_reason")
	keyCall        = attribute.Key("reliar.call")
)

// Metrics implements outbox.Metrics with OpenTelemetry instruments. Make one
// with NewMetrics; its methods are safe for concurrent use.
type Metrics struct {
	attrs []attribute.KeyValue
	types *typeCap
	// plain holds the common attributes alone, for the instruments without
	// attributes of their own.
	plain metric.MeasurementOption

	claimed                metric.Int64Counter
	published              metric.Int64Counter
	publishFailures        metric.Int64Counter
	retried                metric.Int64Counter
	dead                   metric.Int64Counter
	outcomeWriteFailures   metric.Int64Counter
	leaseShortfall         metric.Int64Counter
	abandoned              metric.Int64Counter
	releasedAtDrain        metric.Int64Counter
	redeliveryOutsideDedup metric.Int64Counter
	callsGivenUp           metric.Int64Counter
	invalidBatchResults    metric.Int64Counter
	publishDuration        metric.Float64Histogram

	gauges       gauges
	registration metric.Registration
}

var _ outbox.Metrics = (*Metrics)(nil)

// NewMetrics creates the reliar.outbox.* instruments on meter (nil means the
// global MeterProvider's meter named ScopeName) and registers the callback
// that feeds the gauges. Call Close to unregister it. It accepts
// WithMaxMessageTypes and WithAttributes; any other Option, or a bad one,
// makes it fail with an error wrapping ErrInvalidOption.
func NewMetrics(meter metric.Meter, opts ...Option) (*Metrics, error) {
	cfg, err := newOptions(forMetrics, opts)
	if err != nil {
		return nil, err
	}
	if meter == nil {
		meter = global.GetMeterProvider().Meter(ScopeName)
	}
	m := &Metrics{
		attrs: cfg.attrs,
		types: newTypeCap(cfg.maxMessageTypes, cfg.attrs),
		plain: metric.WithAttributeSet(attribute.NewSet(cfg.attrs...)),
	}
	if err := m.counters(meter); err != nil {
		return nil, err
	}
	if err := m.gauges.create(meter); err != nil {
		return nil, err
	}
	reg, err := meter.RegisterCallback(m.gauges.observe(m.plain), m.gauges.instruments()...)
	if err != nil {
		return nil, fmt.Errorf("reliar otel: register the gauges' callback: %w", err)
	}
	m.registration = reg
	return m, nil
}

// counters creates the counters and the histogram.
func (m *Metrics) counters(meter metric.Meter) error {
	var errs []error
	counter := func(name, unit, desc string) metric.Int64Counter {
		c, err := meter.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return c
	}
	m.claimed = counter("reliar.outbox.claimed", "{message}", "Rows returned by claims.")
	m.published = counter("reliar.outbox.published", "{message}", "Messages published, by message type.")
	m.publishFailures = counter("reliar.outbox.publish.failures", "{message}", "Failed publish calls, by message type and failure kind.")
	m.retried = counter("reliar.outbox.retried", "{message}", "Failures scheduled for another attempt, by failure kind.")
	m.dead = counter("reliar.outbox.dead", "{message}", "Rows moved to dead, by reason.")
	m.outcomeWriteFailures = counter("reliar.outbox.outcome_write.failures", "{call}", "Store calls recording outcomes that failed.")
	m.leaseShortfall = counter("reliar.outbox.lease_renewal.shortfall", "{message}", "Rows a lease renewal did not extend.")
	m.abandoned = counter("reliar.outbox.abandoned", "{message}", "Rows whose outcome could not be written for a whole lease, left to their lease.")
	m.releasedAtDrain = counter("reliar.outbox.released_at_drain", "{message}", "Rows released at shutdown.")
	m.redeliveryOutsideDedup = counter("reliar.outbox.redelivery_outside_dedup", "{message}", "Redeliveries that fell outside the broker's deduplication window.")
	m.callsGivenUp = counter("reliar.outbox.calls_given_up", "{call}", "Publish and store calls that ignored their context past their deadline and were given up, by call.")
	m.invalidBatchResults = counter("reliar.outbox.invalid_batch_results", "{call}", "PublishBatch calls that returned a result slice of the wrong length.")
	h, err := meter.Float64Histogram("reliar.outbox.publish.duration",
		metric.WithUnit("s"),
		metric.WithDescription("Duration of publish calls, successful or not, by message type."),
		metric.WithExplicitBucketBoundaries(DefaultBuckets...))
	m.publishDuration = h
	if err := errors.Join(append(errs, err)...); err != nil {
		return fmt.Errorf("reliar otel: create instruments: %w", err)
	}
	return nil
}

// Close unregisters the gauges' callback; the gauges stop reporting. The
// counters keep working.
func (m *Metrics) Close() error {
	if err := m.registration.Unregister(); err != nil {
		return fmt.Errorf("reliar otel: unregister the gauges' callback: %w", err)
	}
	return nil
}

// with returns the measurement option for the common attributes plus kvs.
func (m *Metrics) with(kvs ...attribute.KeyValue) metric.MeasurementOption {
	all := make([]attribute.KeyValue, 0, len(m.attrs)+len(kvs))
	all = append(append(all, m.attrs...), kvs...)
	return metric.WithAttributes(all...)
}

// add adds n to c, ignoring n <= 0: counters only go up.
func (m *Metrics) add(c metric.Int64Counter, n int, opt metric.MeasurementOption) {
	if n > 0 {
		c.Add(context.Background(), int64(n), opt)
	}
}

// Claimed counts rows returned by claims.
func (m *Metrics) Claimed(n int) { m.add(m.claimed, n, m.plain) }

// Published counts one published message and records the publish call's
// duration.
func (m *Metrics) Published(messageType string, took time.Duration) {
	t := m.types.attr(messageType)
	m.published.Add(context.Background(), 1, t.opt)
	m.publishDuration.Record(context.Background(), took.Seconds(), t.opt)
}

// PublishFailed counts one failed publish call and records its duration.
func (m *Metrics) PublishFailed(messageType string, kind reliar.FailureKind, took time.Duration) {
	t := m.types.attr(messageType)
	m.publishFailures.Add(context.Background(), 1, m.with(t.kv, keyFailureKind.String(kind.String())))
	m.publishDuration.Record(context.Background(), took.Seconds(), t.opt)
}

// Retried counts a failure scheduled for another attempt.
func (m *Metrics) Retried(kind reliar.FailureKind) {
	m.retried.Add(context.Background(), 1, m.with(keyFailureKind.String(kind.String())))
}

// Dead counts n rows moved to dead for reason.
func (m *Metrics) Dead(reason outbox.DeadReason, n int) {
	m.add(m.dead, n, m.with(keyDeadReason.String(validUTF8(string(reason)))))
}

// OutcomeWriteFailed counts n failed outcome writes.
func (m *Metrics) OutcomeWriteFailed(n int) { m.add(m.outcomeWriteFailures, n, m.plain) }

// LeaseShortfall counts n rows a lease renewal did not extend.
func (m *Metrics) LeaseShortfall(n int) { m.add(m.leaseShortfall, n, m.plain) }

// Abandoned counts n rows left to their lease.
func (m *Metrics) Abandoned(n int) { m.add(m.abandoned, n, m.plain) }

// ReleasedAtDrain counts n rows released at shutdown.
func (m *Metrics) ReleasedAtDrain(n int) { m.add(m.releasedAtDrain, n, m.plain) }

// RedeliveryOutsideDedup counts n messages published again after the
// broker's deduplication window had passed, so that a consumer may see them
// twice.
func (m *Metrics) RedeliveryOutsideDedup(n int) { m.add(m.redeliveryOutsideDedup, n, m.plain) }

// CallGivenUp counts a call the dispatcher stopped waiting for, by call.
func (m *Metrics) CallGivenUp(call string) {
	m.callsGivenUp.Add(context.Background(), 1, metric.WithAttributes(append(m.attrs[:len(m.attrs):len(m.attrs)], keyCall.String(validUTF8(call)))...))
}

// InvalidBatchResults counts a PublishBatch call that returned the wrong
// number of results.
func (m *Metrics) InvalidBatchResults(int) { m.add(m.invalidBatchResults, 1, m.plain) }

// BreakerOpen records the breaker's state for reliar.outbox.breaker.open.
func (m *Metrics) BreakerOpen(open bool) { m.gauges.setBreaker(open) }

// Stats keeps s for the row gauges' next observation.
func (m *Metrics) Stats(s outbox.Stats) { m.gauges.setStats(s) }

// gauges holds the observable gauges and the values they report.
type gauges struct {
	pending, due, leased, scheduled, deadRows, expiredPending, breakerOpen metric.Int64ObservableGauge
	oldestDueAge                                                           metric.Float64ObservableGauge

	mu      sync.Mutex
	stats   outbox.Stats
	hasStat bool
	breaker bool
}

func (g *gauges) create(meter metric.Meter) error {
	var errs []error
	gauge := func(name, unit, desc string) metric.Int64ObservableGauge {
		i, err := meter.Int64ObservableGauge(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return i
	}
	g.pending = gauge("reliar.outbox.pending", "{message}", "Rows not yet published nor dead: due, leased, scheduled and expired pending.")
	g.due = gauge("reliar.outbox.due", "{message}", "Rows claimable now.")
	g.leased = gauge("reliar.outbox.leased", "{message}", "Rows held by a live lease.")
	g.scheduled = gauge("reliar.outbox.scheduled", "{message}", "Rows that become due later.")
	g.deadRows = gauge("reliar.outbox.dead_rows", "{message}", "Dead rows awaiting an operator.")
	g.expiredPending = gauge("reliar.outbox.expired_pending", "{message}", "Pending rows past their expiry awaiting the expiry sweep.")
	g.breakerOpen = gauge("reliar.outbox.breaker.open", "", "1 while the circuit breaker holds claims back, else 0.")
	age, err := meter.Float64ObservableGauge("reliar.outbox.oldest_due.age", metric.WithUnit("s"),
		metric.WithDescription("How long the oldest due row has been due; 0 when none."))
	g.oldestDueAge = age
	if err := errors.Join(append(errs, err)...); err != nil {
		return fmt.Errorf("reliar otel: create gauges: %w", err)
	}
	return nil
}

func (g *gauges) instruments() []metric.Observable {
	return []metric.Observable{g.pending, g.due, g.leased, g.scheduled, g.deadRows, g.expiredPending, g.breakerOpen, g.oldestDueAge}
}

func (g *gauges) setStats(s outbox.Stats) {
	g.mu.Lock()
	g.stats, g.hasStat = s, true
	g.mu.Unlock()
}

func (g *gauges) setBreaker(open bool) {
	g.mu.Lock()
	g.breaker = open
	g.mu.Unlock()
}

// observe returns the callback reporting the last values.
func (g *gauges) observe(opt metric.MeasurementOption) metric.Callback {
	return func(_ context.Context, o metric.Observer) error {
		g.mu.Lock()
		s, has, breaker := g.stats, g.hasStat, g.breaker
		g.mu.Unlock()
		var open int64
		if breaker {
			open = 1
		}
		o.ObserveInt64(g.breakerOpen, open, opt)
		if !has {
			return nil
		}
		o.ObserveInt64(g.pending, s.Pending, opt)
		o.ObserveInt64(g.due, s.Due, opt)
		o.ObserveInt64(g.leased, s.Leased, opt)
		o.ObserveInt64(g.scheduled, s.Scheduled, opt)
		o.ObserveInt64(g.deadRows, s.Dead, opt)
		o.ObserveInt64(g.expiredPending, s.ExpiredPending, opt)
		o.ObserveFloat64(g.oldestDueAge, s.OldestDueAge.Seconds(), opt)
		return nil
	}
}
