// Package relay is the engine of `reliar relay`: dispatchers and the
// maintainer over one outbox table, as a process of their own, with
// /metrics, /healthz and /readyz, and an OTLP export of traces and metrics
// when the standard OTEL_* variables name a collector (otlp.go).
//
// [Run] serves the HTTP endpoints first, then waits for the store (reachable
// and migrated — it never migrates unless told to) and the broker, answering
// 503 on /readyz with the reason meanwhile, then runs the dispatchers until
// its context ends, and drains. A broker destination that lacks what it
// needs (a stream, an exchange, a topic) is warned about at start-up and
// at its first failed publish, and makes /readyz answer 503 while every
// destination with rows is unusable (destinations.go). Its error carries the process's exit status
// (package exitcode): 2 for bad input, 1 when a dispatcher or the maintainer
// met a failure that retrying cannot fix, such as a dropped table.
package relay

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/reliar/reliar/cmd/reliar/internal/exitcode"
	"github.com/reliar/reliar/observability/promobs"
	"github.com/reliar/reliar/outbox"
)

// Run runs a relay until ctx ends, then drains within the dispatchers'
// DrainTimeout and returns nil. See the package documentation for the exit
// statuses its errors carry.
func Run(ctx context.Context, cfg Config) error {
	if err := cfg.validate(); err != nil {
		return exitcode.UsageError(err)
	}
	log := cfg.logger()
	tel, err := startTelemetry(ctx, os.LookupEnv, cfg, log)
	if err != nil {
		return err
	}
	defer tel.shutdown()
	var sink outbox.EventSink
	if cfg.EventsFile != "" {
		events, err := openEvents(cfg.EventsFile)
		if err != nil {
			return exitcode.UsageError(err)
		}
		defer func() {
			if err := events.Close(); err != nil {
				log.Error("relay events", "error", err)
			}
		}()
		sink = events
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	metrics, err := promobs.New(reg)
	if err != nil {
		return exitcode.FailureError(fmt.Errorf("metrics: %w", err))
	}
	xg, err := newXIDGauges(reg)
	if err != nil {
		return exitcode.FailureError(fmt.Errorf("metrics: %w", err))
	}
	ready := &readiness{}
	srv, err := startServer(cfg.metricsAddr(), reg, ready, log)
	if err != nil {
		return exitcode.FailureError(err)
	}
	defer srv.stop()
	log.Info("relay serving /metrics, /healthz and /readyz", "addr", srv.addr)
	if cfg.OnServing != nil {
		cfg.OnServing(srv.addr)
	}
	pool, listener := cfg.connections()
	log.Info("relay starting", "store", cfg.Store.String(), "broker", cfg.Broker.String(),
		"dispatchers", cfg.dispatchers(), "fair", cfg.Settings.Fairness.String(),
		"max_in_flight_per_tenant", cfg.Settings.MaxInFlightPerTenant,
		"listen", !cfg.NoWakeups, "async_commit", cfg.StoreOptions.AsyncCommit, "maintainer", cfg.Maintainer != nil,
		"db_connections", connectionsText(pool, listener), "pool_size", pool, "listener_connections", listener)

	d, err := connect(ctx, cfg, ready, log)
	if err != nil {
		return err
	}
	if d == nil {
		log.Info("relay stopped before it started")
		return nil
	}
	defer d.close(log)
	if err := checkRowSecurity(ctx, cfg, d.store, log); err != nil {
		return exitcode.UsageError(err)
	}
	warnBrokerSetup(ctx, cfg.Broker, log)
	w, err := newWorkers(cfg, d, tel.wrap(metrics), sink, log, tel.options()...)
	if err != nil {
		return err
	}
	w.inspector = newInspector(cfg, d.store, xg, log)
	w.tenants = newTenantPoller(cfg, d.store, metrics.Tenants, log)
	if err := w.run(ctx, ready); err != nil {
		return exitcode.FailureError(err)
	}
	log.Info("relay stopped")
	return nil
}

// workers are the dispatchers, the maintainer, the readiness prober and the
// per-tenant gauges' poller of a started relay.
type workers struct {
	dispatchers []*outbox.Dispatcher
	maintainer  *outbox.Maintainer
	prober      *prober
	// inspector looks for rows the claims cannot take; nil for a store
	// that cannot tell.
	inspector *inspector
	tenants   *tenantPoller // nil when the store cannot list tenants
	log       *slog.Logger
}

// newWorkers makes the dispatchers and the maintainer. Settings the store
// cannot honour (per-key ordering, fair claims) are bad input.
func newWorkers(cfg Config, d *deps, m outbox.Metrics, sink outbox.EventSink, log *slog.Logger, extra ...outbox.Option) (*workers, error) {
	if err := checkCapabilities(cfg, d.store.Capabilities()); err != nil {
		return nil, exitcode.UsageError(err)
	}
	n := cfg.dispatchers()
	dests := newDestinations(d.broker, log)
	w := &workers{
		dispatchers: make([]*outbox.Dispatcher, n),
		prober: &prober{backend: d.backend, broker: d.broker, dests: dests, interval: cfg.probeInterval(),
			timeout: cfg.Settings.WithDefaults().StoreTimeout, log: log},
		log: log,
	}
	pub := dests.wrap(d.broker.Publisher)
	bk := newBreakers(n, m.BreakerOpen)
	for i := range n {
		s := cfg.Settings
		if i > 0 {
			// Stats is polled once per process, not once per dispatcher.
			s.StatsInterval = outbox.Off
		}
		opts := []outbox.Option{
			outbox.WithMetrics(dispatcherMetrics{Metrics: m, breakers: bk, i: i}),
			outbox.WithLogger(log.With("dispatcher", i)),
		}
		if cfg.NoWakeups {
			opts = append(opts, outbox.WithoutWakeups())
		}
		if sink != nil {
			opts = append(opts, outbox.WithEvents(sink))
		}
		opts = append(opts, extra...)
		disp, err := outbox.New(d.store, pub, s, opts...)
		if err != nil {
			return nil, exitcode.UsageError(err)
		}
		w.dispatchers[i] = disp
	}
	if cfg.Maintainer != nil {
		mt, err := outbox.NewMaintainer(d.store, *cfg.Maintainer, outbox.WithLogger(log), outbox.WithMetrics(m))
		if err != nil {
			return nil, exitcode.UsageError(err)
		}
		w.maintainer = mt
	}
	return w, nil
}

// ErrCannotClaimFairly is matched (with errors.Is) by the error of a relay
// asked for fair claims (--fair tenant) over a store that cannot make them.
var ErrCannotClaimFairly = errors.New("the store cannot claim fairly across tenants")

// checkCapabilities refuses the settings the store cannot honour, in the
// words of the flags, before outbox.New refuses them in its own.
func checkCapabilities(cfg Config, caps outbox.Capabilities) error {
	if cfg.Settings.Fairness == outbox.FairnessTenant && !caps.TenantFairness {
		return fmt.Errorf("%w: --fair tenant needs a store that can claim fairly across tenants; the %s store cannot (PostgreSQL can): use --fair unordered, or a PostgreSQL database",
			ErrCannotClaimFairly, cfg.Store.Driver())
	}
	return nil
}

// run runs every worker until ctx ends and the dispatchers drained, or
// until one of them fails, which stops the others, and returns that
// failure.
func (w *workers) run(ctx context.Context, ready *readiness) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	fail := func(what string, err error) {
		mu.Lock()
		if first == nil {
			first = fmt.Errorf("%s: %w", what, err)
		}
		mu.Unlock()
		cancel()
	}
	for i, d := range w.dispatchers {
		wg.Go(func() {
			if err := d.Run(ctx); err != nil {
				fail(fmt.Sprintf("dispatcher %d", i), err)
			}
		})
	}
	if w.maintainer != nil {
		wg.Go(func() {
			if err := w.maintainer.Run(ctx); err != nil {
				fail("maintainer", err)
			}
		})
	}
	w.prober.ready = ready
	ready.watch(w.prober.dests)
	wg.Go(func() { w.prober.run(ctx) })
	if w.inspector != nil {
		wg.Go(func() { w.inspector.run(ctx) })
	}
	if w.tenants != nil {
		wg.Go(func() { w.tenants.run(ctx) })
	}
	ready.run(w.dispatchers)
	// The drain is announced when ctx ends, from a goroutine of its own:
	// the workers may be done before it ran, so run waits for it and
	// "relay draining" always comes before the caller's "relay stopped".
	announced := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(announced)
		ready.drain()
		w.log.Info("relay draining")
	})
	w.log.Info("relay running", "dispatchers", len(w.dispatchers))
	wg.Wait()
	if !stop() {
		<-announced
	}
	return first
}

// connectionsText says in words how many database connections the relay
// uses, for its start-up line.
func connectionsText(pool, listener int) string {
	if pool == 0 {
		return fmt.Sprintf("a pool without a cap, and %d for wake-ups", listener)
	}
	return fmt.Sprintf("at most %d: a pool of %d, and %d for wake-ups", pool+listener, pool, listener)
}
