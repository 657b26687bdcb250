package relay

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/go-logr/logr"
	global "go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/reliar/reliar/cmd/reliar/internal/exitcode"
	"github.com/reliar/reliar/observability/otelobs"
	"github.com/reliar/reliar/outbox"
)

// DefaultServiceName is the service.name of the relay's telemetry unless
// OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES names another.
const DefaultServiceName = "reliar-relay"

// telemetry is the relay's OpenTelemetry export over OTLP, next to
// /metrics. A nil *telemetry exports nothing; its methods accept it.
type telemetry struct {
	log     *slog.Logger
	tp      *sdktrace.TracerProvider
	mp      *sdkmetric.MeterProvider
	tracer  *otelobs.Tracer
	metrics *otelobs.Metrics
	// traceHealth and metricHealth watch each signal's exports.
	traceHealth, metricHealth *exportHealth
	// budget bounds the flush at shutdown, counted from when the relay was
	// told to stop: stopped receives that time, unless unwatch stops the
	// watch first.
	budget  time.Duration
	stopped chan time.Time
	unwatch func() bool
}

// startTelemetry reads the OTEL_* variables through lookup and, when they
// name an endpoint, sets up the exporters, the providers and the adapters
// that the dispatchers feed. It returns nil, nil when nothing is exported.
// A bad variable is bad input (exit status 2): it is found before anything
// is connected. The exporters connect lazily: an unreachable collector is
// only logged.
func startTelemetry(ctx context.Context, lookup func(string) (string, bool), cfg Config, log *slog.Logger) (*telemetry, error) {
	plan, err := readOTelEnv(lookup)
	if err != nil {
		return nil, exitcode.UsageError(err)
	}
	if plan.traces == nil && plan.metrics == nil {
		return nil, nil
	}
	res, err := relayResource(ctx)
	if err != nil {
		return nil, err
	}
	installOTelLogging(log)

	t := &telemetry{log: log, budget: drainBudget(cfg.Settings), stopped: make(chan time.Time, 1)}
	cs := &collectorSet{log: log}
	if s := plan.traces; s != nil {
		exp, err := newSpanExporter(ctx, s.protocol)
		if err != nil {
			return nil, exitcode.FailureError(fmt.Errorf("OpenTelemetry traces: %w", err))
		}
		t.traceHealth = cs.health(s)
		t.tp = sdktrace.NewTracerProvider(sdktrace.WithResource(res),
			sdktrace.WithBatcher(watchedSpanExporter{SpanExporter: exp, health: t.traceHealth}))
		var opts []otelobs.Option
		if system := messagingSystem(cfg.Broker.Kind()); system != "" {
			opts = append(opts, otelobs.WithMessagingSystem(system))
		}
		if t.tracer, err = otelobs.NewTracer(t.tp, opts...); err != nil {
			t.shutdownNow()
			return nil, exitcode.FailureError(fmt.Errorf("OpenTelemetry traces: %w", err))
		}
	}
	if s := plan.metrics; s != nil {
		exp, err := newMetricExporter(ctx, s.protocol)
		if err != nil {
			t.shutdownNow()
			return nil, exitcode.FailureError(fmt.Errorf("OpenTelemetry metrics: %w", err))
		}
		t.metricHealth = cs.health(s)
		// The periodic reader takes its interval and timeout from
		// OTEL_METRIC_EXPORT_INTERVAL and OTEL_METRIC_EXPORT_TIMEOUT.
		t.mp = sdkmetric.NewMeterProvider(sdkmetric.WithResource(res),
			sdkmetric.WithReader(sdkmetric.NewPeriodicReader(watchedMetricExporter{Exporter: exp, health: t.metricHealth})))
		if t.metrics, err = otelobs.NewMetrics(t.mp.Meter(otelobs.ScopeName)); err != nil {
			t.shutdownNow()
			return nil, exitcode.FailureError(fmt.Errorf("OpenTelemetry metrics: %w", err))
		}
	}
	t.unwatch = context.AfterFunc(ctx, func() { t.stopped <- time.Now() })
	for _, s := range []*otelSignal{plan.traces, plan.metrics} {
		if s != nil {
			log.Info("relay exporting OpenTelemetry "+s.name, "protocol", s.protocol, "endpoint", s.endpoint)
		}
	}
	return t, nil
}

// relayResource is the resource of the relay's telemetry: service.name
// DefaultServiceName and service.version, then what OTEL_RESOURCE_ATTRIBUTES
// and OTEL_SERVICE_NAME say, which wins.
func relayResource(ctx context.Context) (*resource.Resource, error) {
	version := "(devel)"
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" {
		version = info.Main.Version
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", DefaultServiceName), attribute.String("service.version", version)),
		resource.WithTelemetrySDK(),
		resource.WithHost(),
		resource.WithFromEnv(),
	)
	switch {
	case errors.Is(err, resource.ErrPartialResource):
		return nil, exitcode.UsageError(&EnvError{"OTEL_RESOURCE_ATTRIBUTES", fmt.Sprintf("want comma-separated key=value pairs, values percent-encoded: %v", err)})
	case err != nil:
		return nil, exitcode.FailureError(fmt.Errorf("OpenTelemetry resource: %w", err))
	}
	return res, nil
}

// newSpanExporter makes the OTLP trace exporter of protocol. It reads the
// endpoint, headers, TLS, compression and timeout variables itself.
func newSpanExporter(ctx context.Context, protocol string) (sdktrace.SpanExporter, error) {
	if protocol == protocolGRPC {
		return otlptracegrpc.New(ctx)
	}
	return otlptracehttp.New(ctx)
}

// newMetricExporter makes the OTLP metric exporter of protocol, which reads
// its variables itself as newSpanExporter's does.
func newMetricExporter(ctx context.Context, protocol string) (sdkmetric.Exporter, error) {
	if protocol == protocolGRPC {
		return otlpmetricgrpc.New(ctx)
	}
	return otlpmetrichttp.New(ctx)
}

// messagingSystem is the messaging.system of publish spans for a broker
// kind; "" for a webhook, which is no messaging system.
func messagingSystem(kind string) string {
	switch kind {
	case "amqp":
		return "rabbitmq"
	case "nats", "kafka", "redis":
		return kind
	}
	return ""
}

// drainBudget is the dispatchers' drain timeout, within which the flush at
// shutdown must end.
func drainBudget(s outbox.Settings) time.Duration {
	return s.WithDefaults().DrainTimeout
}

// wrap returns the dispatchers' metrics: m and, when metrics are exported,
// the OpenTelemetry adapter, both fed.
func (t *telemetry) wrap(m outbox.Metrics) outbox.Metrics {
	if t == nil || t.metrics == nil {
		return m
	}
	return fanout{m, t.metrics}
}

// options returns the dispatchers' options: the tracer, when traces are
// exported.
func (t *telemetry) options() []outbox.Option {
	if t == nil || t.tracer == nil {
		return nil
	}
	return []outbox.Option{outbox.WithTracer(t.tracer)}
}

// shutdown flushes what is left and stops the exporters, within the drain
// budget counted from when the relay's context ended (from now, if it has
// not). A signal whose collector already failed is not flushed: an
// unreachable collector must not hold the exit up.
func (t *telemetry) shutdown() {
	if t == nil {
		return
	}
	stoppedAt := time.Now()
	if !t.unwatch() {
		stoppedAt = <-t.stopped
	}
	ctx, cancel := context.WithDeadline(context.Background(), stoppedAt.Add(t.budget))
	defer cancel()
	t.shutdownWithin(ctx)
}

// shutdownNow stops what startTelemetry had set up when it failed half-way.
func (t *telemetry) shutdownNow() {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	t.shutdownWithin(ctx)
}

func (t *telemetry) shutdownWithin(ctx context.Context) {
	var wg sync.WaitGroup
	if t.tp != nil {
		wg.Go(func() {
			if err := t.tp.Shutdown(t.traceHealth.flushContext(ctx)); err != nil {
				t.log.Debug("OpenTelemetry traces shutdown", "error", err)
			}
		})
	}
	if t.mp != nil {
		wg.Go(func() {
			if err := t.mp.Shutdown(t.metricHealth.flushContext(ctx)); err != nil {
				t.log.Debug("OpenTelemetry metrics shutdown", "error", err)
			}
			if t.metrics != nil {
				_ = t.metrics.Close()
			}
		})
	}
	wg.Wait()
}

// installOTelLogging routes the OpenTelemetry SDK's own logs and errors to
// the relay's logger: its logs at their level, its errors (a partial
// success, a dropped measurement) at debug, the first one at warn. Export
// failures are reported by exportHealth, once per outage, and a flush cut
// short at shutdown is no news.
func installOTelLogging(log *slog.Logger) {
	global.SetLogger(logr.FromSlogHandler(log.Handler()))
	var once sync.Once
	global.SetErrorHandler(global.ErrorHandlerFunc(func(err error) {
		level := slog.LevelDebug
		if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
			once.Do(func() { level = slog.LevelWarn })
		}
		log.Log(context.Background(), level, "OpenTelemetry", "error", err)
	}))
}
