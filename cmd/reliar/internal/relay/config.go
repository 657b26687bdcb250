package relay

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/reliar/reliar/cmd/reliar/internal/broker"
	"github.com/reliar/reliar/cmd/reliar/internal/flagval"
	"github.com/reliar/reliar/cmd/reliar/internal/storeurl"
	"github.com/reliar/reliar/outbox"
)

// DefaultMetricsAddr is where /metrics, /healthz and /readyz are served
// unless Config.MetricsAddr says otherwise: loopback only, so that nothing
// is exposed by accident. In Kubernetes, set it to the pod's address (or
// ":9090") so that the kubelet and Prometheus reach it.
const DefaultMetricsAddr = "127.0.0.1:9090"

// MaxDispatchers bounds Config.Dispatchers: past a few dispatchers, more
// of them only contend for the same rows and connections.
const MaxDispatchers = 64

// The connections a relay's pool must hold: ConnsPerDispatcher for each
// dispatcher (a claim and an outcome write or lease renewal at once), and
// ConnsShared for the maintainer and the readiness probe. The wake-up
// listener has a connection of its own, outside the pool.
const (
	ConnsPerDispatcher = 2
	ConnsShared        = 2
)

// PoolNeed returns the pooled connections n dispatchers need (n = 0 counts
// as the default of one).
func PoolNeed(n int) int { return ConnsPerDispatcher*max(n, 1) + ConnsShared }

// Defaults of the Config fields that are not dispatcher settings.
const (
	// DefaultProbeInterval is how often readiness checks the store and the
	// broker.
	DefaultProbeInterval = 2 * time.Second
	// maxRetryInterval caps the wait between start-up attempts.
	maxRetryInterval = 5 * time.Second
	// shutdownTimeout bounds the HTTP server's shutdown at exit.
	shutdownTimeout = 2 * time.Second
)

// Config configures a relay.
type Config struct {
	// Store is the database of the outbox table. Required.
	Store storeurl.Location
	// StoreOptions configure the store: the schema and the logger.
	StoreOptions storeurl.Options
	// Broker is where messages are published. Required.
	Broker broker.Location
	// Dispatchers is how many dispatchers run over the table, at most
	// MaxDispatchers. They share one store: one pool and one wake-up
	// listener. Defaults to 1.
	Dispatchers int
	// Settings are every dispatcher's settings; their zero fields take the
	// dispatcher's defaults. Only the first dispatcher polls Stats for the
	// gauges; the others run with StatsInterval outbox.Off.
	Settings outbox.Settings
	// NoWakeups turns off the store's wake-ups (LISTEN/NOTIFY on
	// PostgreSQL): the dispatchers find new rows by polling alone.
	NoWakeups bool
	// Migrate applies the store's migrations at start-up. Without it the
	// relay waits for the schema to be migrated, answering 503 on /readyz.
	Migrate bool
	// Maintainer configures the purge and expiry sweep; nil disables it.
	Maintainer *outbox.MaintainerSettings
	// MetricsAddr is the address of /metrics, /healthz and /readyz.
	// Defaults to DefaultMetricsAddr; port 0 picks a free port, which the
	// "serving" log line names.
	MetricsAddr string
	// EventsFile, when set, receives every dispatcher event as a JSON line
	// (outbox.EventLog), flushed as each event is written: a checker reads
	// it, even after the relay was killed.
	EventsFile string
	// ProbeInterval is how often readiness checks the store and the
	// broker. Defaults to DefaultProbeInterval.
	ProbeInterval time.Duration
	// InspectInterval is how often the relay looks for outbox rows its
	// claims cannot take: on PostgreSQL, rows whose transaction id is ahead
	// of the database's counter. Defaults to DefaultInspectInterval.
	InspectInterval time.Duration
	// Logger receives the relay's logs; it must not see payloads, and its
	// output is expected to be redacted. Defaults to slog.Default().
	Logger *slog.Logger
	// OnServing, when set, is called with the address /metrics is served
	// on, once the listener is open.
	OnServing func(addr string)
}

// ErrInvalidConfig is matched (with errors.Is) by every error about a
// Config that cannot run.
var ErrInvalidConfig = errors.New("relay: invalid configuration")

// validate checks c without changing it and reports every problem at once:
// an errors.Join of one error per problem, each matching ErrInvalidConfig,
// and those about the dispatcher or maintainer settings also matching
// outbox.ErrInvalidSettings (an *outbox.ConfigError each). Settings are
// checked as far as they can be before the store is known (per-key
// ordering and fair claims need the store's capabilities, checked when the
// dispatchers are made).
func (c Config) validate() error {
	var problems []error
	bad := func(format string, args ...any) {
		problems = append(problems, fmt.Errorf("%w: %s", ErrInvalidConfig, fmt.Sprintf(format, args...)))
	}
	if c.Store == (storeurl.Location{}) {
		bad("no database URL")
	}
	if c.Broker.Kind() == "" {
		bad("no broker URL")
	}
	switch {
	case c.Dispatchers < 0:
		bad("dispatchers must be positive, not %d", c.Dispatchers)
	case c.Dispatchers > MaxDispatchers:
		bad("dispatchers: %d is more than %d", c.Dispatchers, MaxDispatchers)
	}
	if c.ProbeInterval < 0 {
		bad("probe interval must not be negative, not %v", c.ProbeInterval)
	}
	if c.InspectInterval < 0 {
		bad("inspect interval must not be negative, not %v", c.InspectInterval)
	}
	if err := flagval.CheckAddr(c.metricsAddr()); err != nil {
		bad("metrics address: %v", err)
	}
	if c.Dispatchers >= 0 && c.Dispatchers <= MaxDispatchers {
		if pool, need := c.Store.PoolSize(c.StoreOptions), PoolNeed(c.Dispatchers); pool > 0 && pool < need {
			bad("%d dispatchers need a pool of at least %d connections, not %d", c.dispatchers(), need, pool)
		}
	}
	for _, err := range each(c.Settings.Validate(outbox.Capabilities{PerKeyOrdering: true, TenantFairness: true})) {
		problems = append(problems, fmt.Errorf("%w: %w", ErrInvalidConfig, err))
	}
	if m := c.Maintainer; m != nil {
		for _, err := range each(m.Validate()) {
			problems = append(problems, fmt.Errorf("%w: maintainer: %w", ErrInvalidConfig, err))
		}
	}
	return errors.Join(problems...)
}

// each returns the errors err joins, or err alone; nothing for nil.
func each(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

func (c Config) dispatchers() int {
	if c.Dispatchers == 0 {
		return 1
	}
	return c.Dispatchers
}

func (c Config) metricsAddr() string {
	if c.MetricsAddr == "" {
		return DefaultMetricsAddr
	}
	return c.MetricsAddr
}

func (c Config) probeInterval() time.Duration {
	if c.ProbeInterval == 0 {
		return DefaultProbeInterval
	}
	return c.ProbeInterval
}

func (c Config) inspectInterval() time.Duration {
	if c.InspectInterval == 0 {
		return DefaultInspectInterval
	}
	return c.InspectInterval
}

// retryInterval is the wait between start-up attempts: the idle poll
// interval, at most maxRetryInterval.
func (c Config) retryInterval() time.Duration {
	return min(max(c.Settings.WithDefaults().IdlePollInterval, 10*time.Millisecond), maxRetryInterval)
}

func (c Config) logger() *slog.Logger {
	if c.Logger == nil {
		return slog.Default()
	}
	return c.Logger
}

// connections says how many database connections the relay will use: the
// pool's cap (0 when the driver sets none) and the wake-up listener's.
func (c Config) connections() (pool, listener int) {
	pool = c.Store.PoolSize(c.StoreOptions)
	if !c.NoWakeups {
		listener = c.Store.ListenerConns()
	}
	return pool, listener
}
