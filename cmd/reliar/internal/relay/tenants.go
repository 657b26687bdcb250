package relay

import (
	"context"
	"log/slog"
	"time"

	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// tenantGaugeLimit is how many tenants the per-tenant gauges cover: those
// whose due rows have waited longest. It bounds their series.
const tenantGaugeLimit = 10

// tenantPoller feeds the per-tenant gauges (promobs.Metrics.Tenants) from
// the store's TenantStats on the stats interval, once per process.
type tenantPoller struct {
	store    outboxdriver.TenantStatser
	report   func([]outboxdriver.TenantStat)
	interval time.Duration
	timeout  time.Duration
	log      *slog.Logger
	failing  bool
}

// newTenantPoller returns nil when the store cannot list tenants (SQLite,
// MariaDB) or the stats are off.
func newTenantPoller(cfg Config, store outbox.Store, report func([]outboxdriver.TenantStat), log *slog.Logger) *tenantPoller {
	ts, ok := store.(outboxdriver.TenantStatser)
	s := cfg.Settings.WithDefaults()
	if !ok || s.StatsInterval == outbox.Off {
		return nil
	}
	return &tenantPoller{store: ts, report: report, interval: s.StatsInterval, timeout: s.StoreTimeout, log: log}
}

// run polls at once and then every interval until ctx ends.
func (p *tenantPoller) run(ctx context.Context) {
	t := time.NewTicker(p.interval)
	defer t.Stop()
	for {
		p.once(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// once reads the tenants and reports them; a failure keeps the last
// values and is logged when it starts and when it ends.
func (p *tenantPoller) once(ctx context.Context) {
	qctx, cancel := context.WithTimeout(ctx, p.timeout)
	stats, err := p.store.TenantStats(qctx, tenantGaugeLimit)
	cancel()
	if ctx.Err() != nil {
		return
	}
	switch {
	case err != nil && !p.failing:
		p.log.Warn("per-tenant gauges: reading the tenants failed", "error", err)
	case err == nil && p.failing:
		p.log.Info("per-tenant gauges: reading the tenants works again")
	}
	p.failing = err != nil
	if err == nil {
		p.report(stats)
	}
}
