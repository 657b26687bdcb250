package relay

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"sync"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// collector is the export health of one OTLP collector (one scheme and
// host), which both signals may share: the first failed export of an outage
// is logged at warn, the next ones at debug, and the first success after it
// at info.
type collector struct {
	addr    string
	log     *slog.Logger
	mu      sync.Mutex
	failing map[string]bool // by signal
}

// collectorSet is the collectors of one relay, by address.
type collectorSet struct {
	log *slog.Logger
	by  map[string]*collector
}

// health returns the export health of signal s, shared with the other
// signal when it goes to the same collector.
func (cs *collectorSet) health(s *otelSignal) *exportHealth {
	addr := s.endpoint
	if u, err := url.Parse(s.endpoint); err == nil {
		addr = u.Scheme + "://" + u.Host
	}
	if cs.by == nil {
		cs.by = make(map[string]*collector)
	}
	c, ok := cs.by[addr]
	if !ok {
		c = &collector{addr: addr, log: cs.log, failing: make(map[string]bool)}
		cs.by[addr] = c
	}
	return &exportHealth{c: c, signal: s.name}
}

// exportHealth is one signal's view of its collector.
type exportHealth struct {
	c      *collector
	signal string
}

// report records the outcome of one export.
func (h *exportHealth) report(err error) {
	c := h.c
	c.mu.Lock()
	defer c.mu.Unlock()
	wasFailing := len(c.failing) > 0
	switch {
	case err != nil && !wasFailing:
		c.log.Warn("OpenTelemetry export failing; telemetry is dropped until the collector answers",
			"collector", c.addr, "signal", h.signal, "error", err)
		c.failing[h.signal] = true
	case err != nil:
		c.log.Debug("OpenTelemetry export still failing", "collector", c.addr, "signal", h.signal, "error", err)
		c.failing[h.signal] = true
	case c.failing[h.signal]:
		delete(c.failing, h.signal)
		if len(c.failing) == 0 {
			c.log.Info("OpenTelemetry export recovered", "collector", c.addr)
		}
	}
}

// flushContext is the context of the flush at shutdown: ctx, or an ended
// one when the signal's last export failed, so that an unreachable
// collector does not hold the exit up.
func (h *exportHealth) flushContext(ctx context.Context) context.Context {
	if h == nil {
		return ctx
	}
	h.c.mu.Lock()
	failing := h.c.failing[h.signal]
	h.c.mu.Unlock()
	if !failing {
		return ctx
	}
	ended, cancel := context.WithCancel(ctx)
	cancel()
	return ended
}

// watchedSpanExporter reports each export to its health. It returns nil
// for a failed export, which health has logged already, so that the SDK
// does not log it a second time.
type watchedSpanExporter struct {
	sdktrace.SpanExporter
	health *exportHealth
}

// ExportSpans exports spans and reports the outcome.
func (e watchedSpanExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	e.health.reportExport(ctx, e.SpanExporter.ExportSpans(ctx, spans))
	return nil
}

// reportExport reports the outcome of one export made under ctx. An export
// cut off because its context was cancelled — the SDK cancels the export in
// flight when the relay shuts down, and flushes again with the shutdown's
// own context — says nothing about the collector: it is logged at debug,
// not counted as a failure.
func (h *exportHealth) reportExport(ctx context.Context, err error) {
	if err != nil && errors.Is(ctx.Err(), context.Canceled) {
		h.c.log.Debug("OpenTelemetry export cut off by shutdown", "collector", h.c.addr, "signal", h.signal, "error", err)
		return
	}
	h.report(err)
}

// watchedMetricExporter is watchedSpanExporter for metrics.
type watchedMetricExporter struct {
	sdkmetric.Exporter
	health *exportHealth
}

// Export exports rm and reports the outcome.
func (e watchedMetricExporter) Export(ctx context.Context, rm *metricdata.ResourceMetrics) error {
	e.health.reportExport(ctx, e.Exporter.Export(ctx, rm))
	return nil
}
