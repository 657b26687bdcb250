package relay

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/store/pgstore"
)

// DefaultInspectInterval is how often the relay looks for outbox rows its
// claims cannot take (rows ahead of the xid counter) unless
// Config.InspectInterval says otherwise.
const DefaultInspectInterval = time.Minute

// xidWarnEvery is how often the relay repeats its warning while rows ahead
// of the xid counter remain and their number does not grow.
const xidWarnEvery = 10 * time.Minute

// The check of rows ahead of the xid counter reads every pending row (about
// a second per 100,000 on a test machine): it may take inspectTimeout, at
// least the store timeout, and the next one waits inspectSpacing times as
// long as the last took, so that it holds a connection at most a few
// percent of the time however large the backlog.
const (
	inspectTimeout = 30 * time.Second
	inspectSpacing = 20
)

// tableInspector is what a store tells about its table beyond the store
// contract: pgstore's checks of rows restored from another cluster and of
// row-level security. Other stores have neither.
type tableInspector interface {
	XIDAhead(ctx context.Context) (pgstore.XIDAhead, error)
	RowSecurity(ctx context.Context) (pgstore.RowSecurity, error)
}

var _ tableInspector = (*pgstore.Store)(nil)

// xidGauges export the rows ahead of the xid counter.
type xidGauges struct {
	rows, keys prometheus.Gauge
}

func newXIDGauges(reg prometheus.Registerer) (*xidGauges, error) {
	g := &xidGauges{
		rows: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "reliar", Subsystem: "outbox", Name: "xid_ahead_rows",
			Help: "Pending rows whose transaction id is ahead of the database's counter (restored from another cluster): per-key claims pass over them and the later rows of their keys until `reliar repair xids` (PostgreSQL)."}),
		keys: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "reliar", Subsystem: "outbox", Name: "xid_ahead_keys",
			Help: "Ordering keys that rows ahead of the transaction id counter block for per-key claims (PostgreSQL)."}),
	}
	for _, c := range []prometheus.Collector{g.rows, g.keys} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// inspector looks for rows ahead of the xid counter on an interval: it sets
// the gauges, warns when it finds them (when they block this relay's
// per-key claims; otherwise it says so at info), again when their number
// grows and every xidWarnEvery while they remain, and says when they are
// gone.
type inspector struct {
	store    tableInspector
	perKey   bool
	interval time.Duration
	timeout  time.Duration
	gauges   *xidGauges
	log      *slog.Logger

	last     pgstore.XIDAhead
	lastWarn time.Time
	// timedOut is set once a check did not finish in time, so that this
	// is said once.
	timedOut bool
}

// newInspector returns nil for a store that cannot be inspected.
func newInspector(cfg Config, store outbox.Store, g *xidGauges, log *slog.Logger) *inspector {
	in, ok := store.(tableInspector)
	if !ok {
		return nil
	}
	return &inspector{store: in, perKey: cfg.Settings.Ordering == outbox.PerKey, interval: cfg.inspectInterval(),
		timeout: max(inspectTimeout, cfg.Settings.WithDefaults().StoreTimeout), gauges: g, log: log}
}

// run inspects at once and then every interval, or inspectSpacing times
// as long as the last check took when that is longer, until ctx ends.
func (in *inspector) run(ctx context.Context) {
	for {
		start := time.Now()
		in.once(ctx, start)
		wait := max(in.interval, inspectSpacing*time.Since(start))
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// once runs one inspection. A failure is logged at debug, as the readiness
// probe reports a store that is down; a check that did not finish in time
// is said once at warn.
func (in *inspector) once(ctx context.Context, now time.Time) {
	cctx, cancel := context.WithTimeout(ctx, in.timeout)
	x, err := in.store.XIDAhead(cctx)
	timedOut := cctx.Err() == context.DeadlineExceeded
	cancel()
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return
	case timedOut && !in.timedOut:
		in.timedOut = true
		in.log.Warn("relay could not finish its check for rows ahead of the xid counter in time (a large pending backlog?); it keeps trying, less often; reliar stats and reliar doctor run the same check",
			"timeout", in.timeout, "error", err)
		return
	default:
		in.log.Debug("relay could not look for rows ahead of the xid counter", "error", err)
		return
	}
	in.gauges.rows.Set(float64(x.Rows))
	in.gauges.keys.Set(float64(x.Keys))
	prev := in.last
	in.last = x
	switch {
	case x.Rows == 0 && prev.Rows > 0:
		in.log.Info("no outbox row is ahead of the xid counter any more")
	case x.Rows == 0:
	case x.Rows > prev.Rows || now.Sub(in.lastWarn) >= xidWarnEvery:
		in.lastWarn = now
		in.report(x)
	}
}

// report logs the rows ahead: at warn when they block this relay's claims.
func (in *inspector) report(x pgstore.XIDAhead) {
	args := []any{"rows", x.Rows, "keys", x.Keys, "due_rows_blocked", x.BlockedDue, "ids_ahead", x.MaxAhead, "sample_keys", x.Sample,
		"fix", "reliar repair xids"}
	if in.perKey && x.Keys > 0 {
		in.log.Warn("outbox rows carry a transaction id ahead of this database's counter (restored from another cluster?): per-key claims cannot take them nor the later rows of their keys, which will not publish until repaired", args...)
		return
	}
	in.log.Info("outbox rows carry a transaction id ahead of this database's counter (restored from another cluster?): this relay publishes them, a relay with per-key ordering would not take their keys until repaired", args...)
}
