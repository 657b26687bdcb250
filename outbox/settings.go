package outbox

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"
)

// Settings configures a Dispatcher. Start from DefaultSettings and change
// what you need: New validates exactly the values given, without filling
// zeros with defaults.
type Settings struct {
	// WorkerID prefixes the locked_by value this dispatcher writes; every
	// Run appends a random suffix so that two runs never share an identity.
	// Defaults to "<hostname>-<pid>".
	WorkerID string
	// BatchSize caps the rows one claim asks for. Defaults to 512: on
	// PostgreSQL a claim and a completion cost one round trip and one commit
	// whatever their size, so small batches cap throughput (BENCHMARKS.md).
	BatchSize int
	// MaxInFlight caps the rows this dispatcher holds at once: being claimed,
	// waiting, publishing, or waiting for their outcome to be written. A
	// BatchPublisher receives whole claims; any other publisher gets up to
	// MaxInFlight concurrent Publish calls, so lower it for receivers that
	// cannot take that many at once (webhooks). Defaults to 1536, three
	// times BatchSize: one claim in flight, one batch publishing and one
	// waiting for its outcome write, so that claims follow each other
	// without waiting for completions (BENCHMARKS.md).
	MaxInFlight int
	// PollInterval is the wait after a claim that returned fewer rows than
	// asked. Defaults to 100ms.
	PollInterval time.Duration
	// IdlePollInterval is the wait after an empty claim, after a failed
	// claim, and between circuit-breaker probes. Defaults to 1s.
	IdlePollInterval time.Duration
	// Lease is how long a claim holds a row. Leases are renewed every
	// Lease/2 while the dispatcher holds the row. Defaults to 30s.
	Lease time.Duration
	// PublishTimeout bounds one Publish or PublishBatch call; a timeout is a
	// transient failure. Defaults to 10s.
	PublishTimeout time.Duration
	// StoreTimeout bounds every store call. Defaults to 5s.
	StoreTimeout time.Duration
	// DrainTimeout bounds the whole shutdown after the Run context is
	// cancelled. Defaults to 20s.
	DrainTimeout time.Duration
	// StatsInterval is how often Store.Stats feeds the gauges; zero or
	// negative disables it (a process running several dispatchers on one
	// table enables it on one of them). Defaults to 15s.
	StatsInterval time.Duration
	// MaxClaims moves a row to dead (reason max_claims) when it has already
	// been reclaimed after a lapsed lease this many times: a message that
	// keeps crashing or hanging its publisher. Defaults to 5.
	MaxClaims int
	// Retry decides between a retry delay and the dead letter after every
	// failed publish. Defaults to ExponentialBackoff{Base: 1s, Max: 5m,
	// Multiplier: 2, Jitter: 0.2, MaxAttempts: 10}.
	Retry RetryPolicy
	// BreakerThreshold opens the circuit breaker after that many consecutive
	// transient failures on distinct rows; zero disables the breaker.
	// Defaults to 20.
	BreakerThreshold int
	// Ordering selects unordered or per-key publishing; PerKey needs a store
	// with that capability. Defaults to Unordered.
	Ordering Ordering
}

// DefaultSettings returns the default dispatcher settings.
func DefaultSettings() Settings {
	return Settings{
		WorkerID:         defaultWorkerPrefix(),
		BatchSize:        512,
		MaxInFlight:      1536,
		PollInterval:     100 * time.Millisecond,
		IdlePollInterval: time.Second,
		Lease:            30 * time.Second,
		PublishTimeout:   10 * time.Second,
		StoreTimeout:     5 * time.Second,
		DrainTimeout:     20 * time.Second,
		StatsInterval:    15 * time.Second,
		MaxClaims:        5,
		Retry:            DefaultBackoff(),
		BreakerThreshold: 20,
		Ordering:         Unordered,
	}
}

func defaultWorkerPrefix() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "reliar"
	}
	return host + "-" + strconv.Itoa(os.Getpid())
}

// ErrInvalidSettings is matched (with errors.Is) by every *ConfigError.
var ErrInvalidSettings = errors.New("outbox: invalid settings")

// ConfigError reports one invalid setting.
type ConfigError struct {
	// Field names the setting, as in Settings ("MaxInFlight",
	// "Retry.Jitter", ...).
	Field string
	// Reason says what is wrong with it.
	Reason string
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("outbox: invalid settings: %s %s", e.Field, e.Reason)
}

// Is matches ErrInvalidSettings.
func (e *ConfigError) Is(target error) bool { return target == ErrInvalidSettings }

// Validate checks s and returns the first problem as a *ConfigError, or nil.
// It changes nothing. Capabilities are those of the store the settings are
// for; pass the zero value to skip the check of Ordering.
func (s Settings) Validate(caps Capabilities) error {
	bad := func(field, reason string) error { return &ConfigError{Field: field, Reason: reason} }
	switch {
	case s.MaxInFlight <= 0:
		return bad("MaxInFlight", "must be positive")
	case s.BatchSize <= 0:
		return bad("BatchSize", "must be positive")
	case s.PollInterval <= 0:
		return bad("PollInterval", "must be positive")
	case s.IdlePollInterval <= 0:
		return bad("IdlePollInterval", "must be positive")
	case s.PublishTimeout <= 0:
		return bad("PublishTimeout", "must be positive")
	case s.StoreTimeout <= 0:
		return bad("StoreTimeout", "must be positive")
	case s.Lease <= s.PublishTimeout:
		return bad("Lease", fmt.Sprintf("(%v) must be longer than PublishTimeout (%v)", s.Lease, s.PublishTimeout))
	case s.StoreTimeout >= s.Lease/2:
		return bad("StoreTimeout", fmt.Sprintf("(%v) must be shorter than Lease/2 (%v), so a renewal lands before the lease lapses", s.StoreTimeout, s.Lease/2))
	case s.DrainTimeout <= s.StoreTimeout:
		return bad("DrainTimeout", fmt.Sprintf("(%v) must be longer than StoreTimeout (%v)", s.DrainTimeout, s.StoreTimeout))
	case s.MaxClaims <= 0:
		return bad("MaxClaims", "must be positive")
	case s.BreakerThreshold < 0:
		return bad("BreakerThreshold", "must not be negative (zero disables the breaker)")
	case s.Retry == nil:
		return bad("Retry", "must be set (DefaultBackoff() is the default)")
	case s.Ordering != Unordered && s.Ordering != PerKey:
		return bad("Ordering", "is not Unordered or PerKey")
	case s.Ordering == PerKey && !caps.PerKeyOrdering:
		return bad("Ordering", "PerKey needs a store with the PerKeyOrdering capability")
	}
	switch r := s.Retry.(type) {
	case ExponentialBackoff:
		return r.validate()
	case *ExponentialBackoff:
		if r == nil {
			return bad("Retry", "is a nil *ExponentialBackoff")
		}
		return r.validate()
	}
	return nil
}

// Warnings returns the settings that are valid but risky.
func (s Settings) Warnings() []string {
	var w []string
	if s.StoreTimeout > s.DrainTimeout/2 {
		w = append(w, fmt.Sprintf("StoreTimeout (%v) is over half of DrainTimeout (%v): one slow store call can use most of the shutdown budget", s.StoreTimeout, s.DrainTimeout))
	}
	if s.DrainTimeout >= s.Lease {
		w = append(w, fmt.Sprintf("DrainTimeout (%v) is not shorter than Lease (%v): rows held through a long drain may be reclaimed by another worker meanwhile", s.DrainTimeout, s.Lease))
	}
	return w
}
