package outbox

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"
)

// Off switches off a setting that is on by default (StatsInterval,
// BreakerThreshold, Retry.Jitter, Retry.MaxAttempts). It is the value -1, so
// that it fits a duration, an integer or a fraction; see the package
// documentation for the zero-means-default rule.
const Off = -1

// KeepForever is the retention that never deletes (MaintainerSettings'
// PublishedRetention and DeadRetention).
const KeepForever time.Duration = -1

// Settings configures a Dispatcher. The zero value of every field means its
// default, so a Settings with only the fields you care about set is valid:
// New fills the others, deriving them from the ones you set where the
// documentation below says so (a shorter Lease brings PublishTimeout,
// StoreTimeout and DrainTimeout down with it). WithDefaults returns the
// settings New would use.
type Settings struct {
	// WorkerID prefixes the locked_by value this dispatcher writes; every
	// Run appends a random suffix so that two runs never share an identity.
	// Defaults to "<hostname>-<pid>".
	WorkerID string
	// BatchSize caps the rows one claim asks for. Defaults to 512, or to
	// MaxInFlight when that is set lower: a claim and a completion cost one
	// round trip and one commit whatever their size, so small batches cap
	// throughput (BENCHMARKS.md).
	BatchSize int
	// MaxInFlight caps the rows this dispatcher holds at once: being claimed,
	// waiting, publishing, or waiting for their outcome to be written. A
	// BatchPublisher receives whole claims; any other publisher gets up to
	// MaxInFlight concurrent Publish calls, so lower it for receivers that
	// cannot take that many at once (webhooks). Defaults to three times
	// BatchSize (1536): one claim in flight, one batch publishing and one
	// waiting for its outcome write, so that claims follow each other
	// without waiting for completions.
	MaxInFlight int
	// PollInterval is the wait after a claim that returned fewer rows than
	// asked. Defaults to 100ms. While claims come back full, on a store with
	// the ClaimAfter capability (pgstore), each claim starts after the last
	// row of the one before it, and one claim in every PollInterval starts
	// from the head again: a row that becomes due behind that position
	// (released, lapsed, retried, or committed by a transaction that
	// started earlier) waits at most about one PollInterval longer than a
	// claim from the head would have made it.
	PollInterval time.Duration
	// IdlePollInterval is the wait after an empty claim, after a failed
	// claim, and between circuit-breaker probes. Defaults to 1s, or to
	// PollInterval when that is set longer.
	IdlePollInterval time.Duration
	// Lease is how long a claim holds a row. Leases are renewed every
	// Lease/2 while the dispatcher holds the row. Defaults to 30s, or longer
	// when PublishTimeout or StoreTimeout is set so long that 30s would be
	// invalid (three times PublishTimeout, six times StoreTimeout).
	Lease time.Duration
	// PublishTimeout bounds one Publish or PublishBatch call; a timeout is a
	// transient failure. The dispatcher enforces it itself: a call still
	// running shortly after it is resolved as timed out, whether or not the
	// publisher honours its context. Defaults to 10s, or Lease/3 when that
	// is shorter.
	PublishTimeout time.Duration
	// StoreTimeout bounds every store call, enforced the same way. Defaults
	// to 5s, or Lease/6 when that is shorter.
	StoreTimeout time.Duration
	// DrainTimeout bounds the whole shutdown after the Run context is
	// cancelled. Defaults to 20s, or two thirds of Lease when that is
	// shorter (but always more than StoreTimeout).
	DrainTimeout time.Duration
	// StatsInterval is how often Store.Stats feeds the gauges. Off disables
	// it (a process running several dispatchers on one table enables it on
	// one of them). Defaults to 15s.
	StatsInterval time.Duration
	// MaxClaims moves a row to dead (reason max_claims) when it has already
	// been reclaimed after a lapsed lease this many times: a message that
	// keeps crashing or hanging its publisher. It cannot be switched off.
	// Defaults to 5.
	MaxClaims int
	// Retry decides between a retry delay and the dead letter after every
	// failed publish. Defaults to DefaultBackoff(): ExponentialBackoff{Base:
	// 1s, Max: 5m, Multiplier: 2, Jitter: 0.2, MaxAttempts: 10}. The zero
	// fields of an ExponentialBackoff take those defaults too.
	Retry RetryPolicy
	// BreakerThreshold opens the circuit breaker after that many consecutive
	// transient failures on distinct rows. Off disables the breaker.
	// Defaults to 20.
	BreakerThreshold int
	// Ordering selects unordered or per-key publishing; PerKey needs a store
	// with that capability. Defaults to Unordered.
	Ordering Ordering
	// Fairness selects how claims share rows among tenants (the messages'
	// TenantID; rows without one form one tenant). FairnessTenant shares
	// every claim round-robin among the tenants with due rows, so that one
	// tenant's backlog never delays the others by more than about one claim
	// cycle; it needs a store with the TenantFairness capability and cannot
	// be combined with Ordering PerKey. Defaults to FairnessUnordered.
	Fairness Fairness
	// MaxInFlightPerTenant caps the rows of one tenant this dispatcher holds
	// at once, so that a tenant whose receiver is slow cannot take all of
	// MaxInFlight. It needs Fairness FairnessTenant. Zero means no cap.
	MaxInFlightPerTenant int
}

// The defaults of Settings, where no other setting changes them.
const (
	defaultBatchSize        = 512
	defaultInFlightClaims   = 3 // MaxInFlight = 3 × BatchSize
	defaultPollInterval     = 100 * time.Millisecond
	defaultIdlePollInterval = time.Second
	defaultLease            = 30 * time.Second
	defaultPublishTimeout   = 10 * time.Second
	defaultStoreTimeout     = 5 * time.Second
	defaultDrainTimeout     = 20 * time.Second
	defaultStatsInterval    = 15 * time.Second
	defaultMaxClaims        = 5
	defaultBreaker          = 20
)

// DefaultSettings returns the default dispatcher settings, every field
// filled: the same as Settings{}.WithDefaults().
func DefaultSettings() Settings { return Settings{}.WithDefaults() }

// WithDefaults returns a copy of s with every zero field set to its
// default, derived from the fields that are set as each field's
// documentation says. It changes no field that is set, valid or not.
func (s Settings) WithDefaults() Settings {
	if s.WorkerID == "" {
		s.WorkerID = defaultWorkerPrefix()
	}
	switch {
	case s.BatchSize == 0 && s.MaxInFlight > 0:
		s.BatchSize = min(defaultBatchSize, s.MaxInFlight)
	case s.BatchSize == 0:
		s.BatchSize = defaultBatchSize
	}
	if s.MaxInFlight == 0 {
		batch := s.BatchSize
		if batch <= 0 {
			batch = defaultBatchSize // the invalid BatchSize is Validate's to report
		}
		s.MaxInFlight = defaultInFlightClaims * batch
	}
	if s.PollInterval == 0 {
		s.PollInterval = defaultPollInterval
	}
	if s.IdlePollInterval == 0 {
		s.IdlePollInterval = max(defaultIdlePollInterval, s.PollInterval)
	}
	if s.Lease == 0 {
		s.Lease = max(defaultLease, 3*s.PublishTimeout, 6*s.StoreTimeout)
	}
	if s.PublishTimeout == 0 {
		s.PublishTimeout = min(defaultPublishTimeout, (s.Lease / 3).Truncate(time.Millisecond))
	}
	if s.StoreTimeout == 0 {
		s.StoreTimeout = min(defaultStoreTimeout, (s.Lease / 6).Truncate(time.Millisecond))
	}
	if s.DrainTimeout == 0 {
		s.DrainTimeout = max(min(defaultDrainTimeout, (s.Lease*2/3).Truncate(time.Millisecond)), 2*s.StoreTimeout)
	}
	if s.StatsInterval == 0 {
		s.StatsInterval = defaultStatsInterval
	}
	if s.MaxClaims == 0 {
		s.MaxClaims = defaultMaxClaims
	}
	switch r := s.Retry.(type) {
	case nil:
		s.Retry = DefaultBackoff()
	case ExponentialBackoff:
		s.Retry = r.WithDefaults()
	case *ExponentialBackoff:
		if r != nil {
			b := r.WithDefaults()
			s.Retry = &b
		}
	}
	if s.BreakerThreshold == 0 {
		s.BreakerThreshold = defaultBreaker
	}
	return s
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

// ConfigError reports one invalid setting. Validate and New return every
// problem of one settings value at once, joined with errors.Join: range over
// them with errors.As, or through the Unwrap() []error of the joined error.
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

// problems collects the *ConfigErrors of one settings value.
type problems []error

func (p *problems) add(field, reason string, args ...any) {
	*p = append(*p, &ConfigError{Field: field, Reason: fmt.Sprintf(reason, args...)})
}

func (p problems) err() error { return errors.Join(p...) }

// Validate checks the settings New would use (s.WithDefaults()) and returns
// every problem as a *ConfigError, joined, or nil. It changes nothing.
// Capabilities are those of the store the settings are for; pass the zero
// value to skip the check of Ordering.
func (s Settings) Validate(caps Capabilities) error {
	s = s.WithDefaults()
	var p problems
	positive := func(field string, v int64) {
		if v <= 0 {
			p.add(field, "must be positive (zero means the default)")
		}
	}
	positive("MaxInFlight", int64(s.MaxInFlight))
	positive("BatchSize", int64(s.BatchSize))
	positive("PollInterval", int64(s.PollInterval))
	positive("IdlePollInterval", int64(s.IdlePollInterval))
	positive("Lease", int64(s.Lease))
	positive("PublishTimeout", int64(s.PublishTimeout))
	positive("StoreTimeout", int64(s.StoreTimeout))
	positive("DrainTimeout", int64(s.DrainTimeout))
	if s.MaxClaims < 0 {
		p.add("MaxClaims", "must be positive: it bounds a message that crashes its publisher and cannot be switched off")
	}
	if s.StatsInterval < 0 && s.StatsInterval != Off {
		p.add("StatsInterval", "(%v) must be positive, or Off", s.StatsInterval)
	}
	if s.BreakerThreshold < 0 && s.BreakerThreshold != Off {
		p.add("BreakerThreshold", "(%d) must be positive, or Off", s.BreakerThreshold)
	}
	if s.PublishTimeout > 0 && s.Lease > 0 && s.Lease <= s.PublishTimeout {
		p.add("Lease", "(%v) must be longer than PublishTimeout (%v)", s.Lease, s.PublishTimeout)
	}
	if s.StoreTimeout > 0 && s.Lease > 0 && s.StoreTimeout >= s.Lease/2 {
		p.add("StoreTimeout", "(%v) must be shorter than Lease/2 (%v), so a renewal lands before the lease lapses", s.StoreTimeout, s.Lease/2)
	}
	if s.StoreTimeout > 0 && s.DrainTimeout > 0 && s.DrainTimeout <= s.StoreTimeout {
		p.add("DrainTimeout", "(%v) must be longer than StoreTimeout (%v)", s.DrainTimeout, s.StoreTimeout)
	}
	switch {
	case s.Ordering != Unordered && s.Ordering != PerKey:
		p.add("Ordering", "(%v) is not Unordered or PerKey", s.Ordering)
	case s.Ordering == PerKey && !caps.PerKeyOrdering:
		p.add("Ordering", "PerKey needs a store with the PerKeyOrdering capability")
	}
	switch {
	case s.Fairness != FairnessUnordered && s.Fairness != FairnessTenant:
		p.add("Fairness", "(%v) is not FairnessUnordered or FairnessTenant", s.Fairness)
	case s.Fairness == FairnessTenant && s.Ordering == PerKey:
		p.add("Fairness", "FairnessTenant cannot be combined with Ordering PerKey: a fair claim does not keep the rows of a key in order")
	case s.Fairness == FairnessTenant && !caps.TenantFairness:
		p.add("Fairness", "FairnessTenant needs a store with the TenantFairness capability")
	}
	switch {
	case s.MaxInFlightPerTenant < 0:
		p.add("MaxInFlightPerTenant", "(%d) must be positive, or zero for no cap", s.MaxInFlightPerTenant)
	case s.MaxInFlightPerTenant > 0 && s.Fairness != FairnessTenant:
		p.add("MaxInFlightPerTenant", "needs Fairness FairnessTenant: an unfair claim cannot skip a capped tenant's backlog without scanning it")
	}
	switch r := s.Retry.(type) {
	case ExponentialBackoff:
		p = append(p, r.problems()...)
	case *ExponentialBackoff:
		if r == nil {
			p.add("Retry", "is a nil *ExponentialBackoff")
		} else {
			p = append(p, r.problems()...)
		}
	}
	return p.err()
}

// Warnings returns the settings that are valid but risky.
func (s Settings) Warnings() []string {
	s = s.WithDefaults()
	var w []string
	if s.StoreTimeout > s.DrainTimeout/2 {
		w = append(w, fmt.Sprintf("StoreTimeout (%v) is over half of DrainTimeout (%v): one slow store call can use most of the shutdown budget", s.StoreTimeout, s.DrainTimeout))
	}
	if s.DrainTimeout >= s.Lease {
		w = append(w, fmt.Sprintf("DrainTimeout (%v) is not shorter than Lease (%v): rows held through a long drain may be reclaimed by another worker meanwhile", s.DrainTimeout, s.Lease))
	}
	return w
}
