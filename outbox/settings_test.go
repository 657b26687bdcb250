package outbox_test

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox"
)

func TestSettingsConfigErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(s *outbox.Settings)
		caps   outbox.Capabilities
		field  string
	}{
		{"negative MaxInFlight", func(s *outbox.Settings) { s.MaxInFlight = -1 }, outbox.Capabilities{}, "MaxInFlight"},
		{"negative BatchSize", func(s *outbox.Settings) { s.BatchSize = -1 }, outbox.Capabilities{}, "BatchSize"},
		{"negative PollInterval", func(s *outbox.Settings) { s.PollInterval = -time.Second }, outbox.Capabilities{}, "PollInterval"},
		{"negative IdlePollInterval", func(s *outbox.Settings) { s.IdlePollInterval = -time.Second }, outbox.Capabilities{}, "IdlePollInterval"},
		{"lease equal to publish timeout", func(s *outbox.Settings) { s.Lease = s.PublishTimeout }, outbox.Capabilities{}, "Lease"},
		{"lease shorter than publish timeout", func(s *outbox.Settings) { s.Lease = s.PublishTimeout / 2 }, outbox.Capabilities{}, "Lease"},
		{"store timeout at half the lease", func(s *outbox.Settings) { s.StoreTimeout = s.Lease / 2 }, outbox.Capabilities{}, "StoreTimeout"},
		{"drain timeout equal to store timeout", func(s *outbox.Settings) { s.DrainTimeout = s.StoreTimeout }, outbox.Capabilities{}, "DrainTimeout"},
		{"negative MaxClaims", func(s *outbox.Settings) { s.MaxClaims = -1 }, outbox.Capabilities{}, "MaxClaims"},
		{"breaker threshold below Off", func(s *outbox.Settings) { s.BreakerThreshold = -2 }, outbox.Capabilities{}, "BreakerThreshold"},
		{"stats interval negative but not Off", func(s *outbox.Settings) { s.StatsInterval = -time.Second }, outbox.Capabilities{}, "StatsInterval"},
		{"jitter above one", func(s *outbox.Settings) { s.Retry = backoff(func(b *outbox.ExponentialBackoff) { b.Jitter = 1.5 }) }, outbox.Capabilities{}, "Retry.Jitter"},
		{"negative jitter other than Off", func(s *outbox.Settings) { s.Retry = backoff(func(b *outbox.ExponentialBackoff) { b.Jitter = -0.1 }) }, outbox.Capabilities{}, "Retry.Jitter"},
		{"NaN jitter", func(s *outbox.Settings) {
			s.Retry = backoff(func(b *outbox.ExponentialBackoff) { b.Jitter = math.NaN() })
		}, outbox.Capabilities{}, "Retry.Jitter"},
		{"max attempts below Off", func(s *outbox.Settings) { s.Retry = backoff(func(b *outbox.ExponentialBackoff) { b.MaxAttempts = -3 }) }, outbox.Capabilities{}, "Retry.MaxAttempts"},
		{"negative base", func(s *outbox.Settings) {
			s.Retry = backoff(func(b *outbox.ExponentialBackoff) { b.Base = -time.Second })
		}, outbox.Capabilities{}, "Retry.Base"},
		{"max below base", func(s *outbox.Settings) {
			s.Retry = backoff(func(b *outbox.ExponentialBackoff) { b.Base = time.Minute; b.Max = time.Second })
		}, outbox.Capabilities{}, "Retry.Max"},
		{"pointer backoff validated too", func(s *outbox.Settings) {
			b := outbox.DefaultBackoff()
			b.MaxAttempts = -5
			s.Retry = &b
		}, outbox.Capabilities{}, "Retry.MaxAttempts"},
		{"per-key ordering without the capability", func(s *outbox.Settings) { s.Ordering = outbox.PerKey }, outbox.Capabilities{}, "Ordering"},
		{"unknown ordering", func(s *outbox.Settings) { s.Ordering = outbox.Ordering(7) }, outbox.Capabilities{PerKeyOrdering: true}, "Ordering"},
		{"tenant fairness with per-key ordering", func(s *outbox.Settings) { s.Fairness = outbox.FairnessTenant; s.Ordering = outbox.PerKey },
			outbox.Capabilities{PerKeyOrdering: true, TenantFairness: true}, "Fairness"},
		{"tenant fairness without the capability", func(s *outbox.Settings) { s.Fairness = outbox.FairnessTenant }, outbox.Capabilities{PerKeyOrdering: true}, "Fairness"},
		{"unknown fairness", func(s *outbox.Settings) { s.Fairness = outbox.Fairness(5) }, outbox.Capabilities{TenantFairness: true}, "Fairness"},
		{"per-tenant cap without tenant fairness", func(s *outbox.Settings) { s.MaxInFlightPerTenant = 8 }, outbox.Capabilities{TenantFairness: true}, "MaxInFlightPerTenant"},
		{"negative per-tenant cap", func(s *outbox.Settings) { s.Fairness = outbox.FairnessTenant; s.MaxInFlightPerTenant = -1 },
			outbox.Capabilities{TenantFairness: true}, "MaxInFlightPerTenant"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := outbox.DefaultSettings()
			tt.change(&s)
			err := s.Validate(tt.caps)
			var ce *outbox.ConfigError
			if !errors.As(err, &ce) || !errors.Is(err, outbox.ErrInvalidSettings) {
				t.Fatalf("Validate = %v, want a *ConfigError matching ErrInvalidSettings", err)
			}
			if ce.Field != tt.field {
				t.Fatalf("error names field %q, want %q (%v)", ce.Field, tt.field, err)
			}
			if !strings.Contains(err.Error(), tt.field) {
				t.Fatalf("error text %q does not name %q", err, tt.field)
			}
		})
	}
}

func backoff(change func(b *outbox.ExponentialBackoff)) outbox.ExponentialBackoff {
	b := outbox.DefaultBackoff()
	change(&b)
	return b
}

func TestSettingsValid(t *testing.T) {
	t.Parallel()
	s := outbox.DefaultSettings()
	if err := s.Validate(outbox.Capabilities{}); err != nil {
		t.Fatalf("default settings invalid: %v", err)
	}
	if w := s.Warnings(); len(w) != 0 {
		t.Fatalf("default settings warn: %v", w)
	}
	s.Ordering = outbox.PerKey
	if err := s.Validate(outbox.Capabilities{PerKeyOrdering: true}); err != nil {
		t.Fatalf("per-key with the capability: %v", err)
	}
	s.Retry = outbox.RetryPolicyFunc(func(outbox.Failure) outbox.Decision { return outbox.RetryAfter(time.Second) })
	if err := s.Validate(outbox.Capabilities{PerKeyOrdering: true}); err != nil {
		t.Fatalf("custom retry policy: %v", err)
	}
	s = outbox.DefaultSettings()
	s.Fairness, s.MaxInFlightPerTenant = outbox.FairnessTenant, 8
	if err := s.Validate(outbox.Capabilities{TenantFairness: true}); err != nil {
		t.Fatalf("tenant fairness and a per-tenant cap with the capability: %v", err)
	}
}

func TestSettingsWarnings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(s *outbox.Settings)
		want   string
	}{
		{"store timeout over half the drain", func(s *outbox.Settings) { s.StoreTimeout = 8 * time.Second; s.DrainTimeout = 12 * time.Second }, "StoreTimeout"},
		{"drain not shorter than lease", func(s *outbox.Settings) { s.DrainTimeout = s.Lease }, "DrainTimeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := outbox.DefaultSettings()
			tt.change(&s)
			d, err := outbox.New(newMemStore(), newFakePublisher(nil), s)
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			w := d.Warnings()
			if len(w) != 1 || !strings.HasPrefix(w[0], tt.want) {
				t.Fatalf("Warnings = %q, want one starting with %q", w, tt.want)
			}
		})
	}
}

func TestNewRefusesNilParts(t *testing.T) {
	t.Parallel()
	if _, err := outbox.New(nil, newFakePublisher(nil), outbox.DefaultSettings()); !errors.Is(err, outbox.ErrInvalidSettings) {
		t.Fatalf("nil store: %v", err)
	}
	if _, err := outbox.New(newMemStore(), nil, outbox.DefaultSettings()); !errors.Is(err, outbox.ErrInvalidSettings) {
		t.Fatalf("nil publisher: %v", err)
	}
	_, err := outbox.New(nil, nil, outbox.Settings{MaxInFlight: -1})
	if got := configFields(err); !slices.Equal(got, []string{"store", "publisher", "MaxInFlight"}) {
		t.Fatalf("New reports %v (%v), want every problem at once", got, err)
	}
}

func TestZeroSettingsMeanTheDefaults(t *testing.T) {
	t.Parallel()
	d, err := outbox.New(newMemStore(), newFakePublisher(nil), outbox.Settings{})
	if err != nil {
		t.Fatalf("zero settings: %v", err)
	}
	got, want := d.Settings(), outbox.DefaultSettings()
	if got.WorkerID != want.WorkerID || got.Retry != want.Retry {
		t.Fatalf("effective settings %+v, want the defaults %+v", got, want)
	}
	got.Retry, want.Retry = nil, nil
	if got != want {
		t.Fatalf("effective settings %+v, want the defaults %+v", got, want)
	}
	if want.BatchSize != 512 || want.MaxInFlight != 1536 || want.Lease != 30*time.Second || want.PublishTimeout != 10*time.Second ||
		want.StoreTimeout != 5*time.Second || want.DrainTimeout != 20*time.Second || want.StatsInterval != 15*time.Second ||
		want.MaxClaims != 5 || want.BreakerThreshold != 20 || want.PollInterval != 100*time.Millisecond || want.IdlePollInterval != time.Second {
		t.Fatalf("defaults changed: %+v", want)
	}
	if b := outbox.DefaultBackoff(); b != (outbox.ExponentialBackoff{Base: time.Second, Max: 5 * time.Minute, Multiplier: 2, Jitter: 0.2, MaxAttempts: 10}) {
		t.Fatalf("default backoff %+v", b)
	}
}

// TestOneFieldSetDerivesTheRest covers the rule that settings the user did
// not set derive from those they did, so that changing one knob never needs
// three.
func TestOneFieldSetDerivesTheRest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		in    outbox.Settings
		check func(s outbox.Settings) bool
	}{
		{"batch size alone", outbox.Settings{BatchSize: 100}, func(s outbox.Settings) bool { return s.BatchSize == 100 && s.MaxInFlight == 300 }},
		{"max in flight alone", outbox.Settings{MaxInFlight: 64}, func(s outbox.Settings) bool { return s.MaxInFlight == 64 && s.BatchSize == 64 }},
		{"short lease", outbox.Settings{Lease: 5 * time.Second}, func(s outbox.Settings) bool {
			return s.PublishTimeout < s.Lease && s.StoreTimeout < s.Lease/2 && s.DrainTimeout > s.StoreTimeout && s.DrainTimeout < s.Lease
		}},
		{"very short lease", outbox.Settings{Lease: 300 * time.Millisecond}, func(s outbox.Settings) bool {
			return s.PublishTimeout == 100*time.Millisecond && s.StoreTimeout == 50*time.Millisecond && s.DrainTimeout == 200*time.Millisecond
		}},
		{"long publish timeout", outbox.Settings{PublishTimeout: time.Minute}, func(s outbox.Settings) bool { return s.Lease == 3*time.Minute }},
		{"long store timeout", outbox.Settings{StoreTimeout: 20 * time.Second}, func(s outbox.Settings) bool {
			return s.Lease == 2*time.Minute && s.DrainTimeout == 40*time.Second
		}},
		{"long poll interval", outbox.Settings{PollInterval: 3 * time.Second}, func(s outbox.Settings) bool { return s.IdlePollInterval == 3*time.Second }},
		{"partial backoff", outbox.Settings{Retry: outbox.ExponentialBackoff{MaxAttempts: 3}}, func(s outbox.Settings) bool {
			b := s.Retry.(outbox.ExponentialBackoff)
			return b.MaxAttempts == 3 && b.Base == time.Second && b.Max == 5*time.Minute && b.Jitter == 0.2 && b.Multiplier == 2
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.in.Validate(outbox.Capabilities{}); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			d, err := outbox.New(newMemStore(), newFakePublisher(nil), tt.in)
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			if w := d.Warnings(); len(w) != 0 {
				t.Fatalf("derived settings warn: %v", w)
			}
			if s := d.Settings(); !tt.check(s) {
				t.Fatalf("derived settings %+v", s)
			}
		})
	}
}

func TestSettingsReportEveryProblemAtOnce(t *testing.T) {
	t.Parallel()
	s := outbox.Settings{BatchSize: -1, PollInterval: -time.Second, Lease: 5 * time.Second, PublishTimeout: 10 * time.Second, StoreTimeout: 5 * time.Second}
	err := s.Validate(outbox.Capabilities{})
	got := configFields(err)
	for _, f := range []string{"BatchSize", "PollInterval", "Lease", "StoreTimeout"} {
		if !slices.Contains(got, f) {
			t.Errorf("problems %v do not name %s (%v)", got, f, err)
		}
	}
	if !errors.Is(err, outbox.ErrInvalidSettings) {
		t.Fatalf("joined error %v does not match ErrInvalidSettings", err)
	}
}

func TestOffSwitchesOff(t *testing.T) {
	t.Parallel()
	d, err := outbox.New(newMemStore(), newFakePublisher(nil), outbox.Settings{StatsInterval: outbox.Off, BreakerThreshold: outbox.Off,
		Retry: outbox.ExponentialBackoff{Jitter: outbox.Off, MaxAttempts: outbox.Off}})
	if err != nil {
		t.Fatal(err)
	}
	s := d.Settings()
	if s.StatsInterval != outbox.Off || s.BreakerThreshold != outbox.Off {
		t.Fatalf("Off rewritten: %+v", s)
	}
	b := s.Retry.(outbox.ExponentialBackoff)
	if got := b.Delay(2, 0); got != 4*time.Second {
		t.Fatalf("delay without jitter = %v, want 4s", got)
	}
	if dec := b.Decide(outbox.Failure{Kind: reliar.FailureTransient, Attempts: 1000}); dec.Dead() {
		t.Fatalf("MaxAttempts Off went dead: %+v", dec)
	}
}

func TestExponentialBackoff(t *testing.T) {
	t.Parallel()
	b := outbox.ExponentialBackoff{Base: time.Second, Max: time.Minute, Multiplier: 2, Jitter: 0.2, MaxAttempts: 5}
	tests := []struct {
		name     string
		attempts int
		kind     reliar.FailureKind
		dead     outbox.DeadReason
	}{
		{"first transient failure retries", 0, reliar.FailureTransient, ""},
		{"permanent goes dead at once", 0, reliar.FailurePermanent, outbox.DeadPermanent},
		{"below max attempts retries", 3, reliar.FailureTransient, ""},
		{"reaching max attempts goes dead", 4, reliar.FailureTransient, outbox.DeadMaxAttempts},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := b.Decide(outbox.Failure{Err: errTransient, Kind: tt.kind, Attempts: tt.attempts})
			if d.Reason != tt.dead {
				t.Fatalf("Decide reason = %q, want %q", d.Reason, tt.dead)
			}
			if !d.Dead() {
				lo := b.Delay(tt.attempts, 0)
				hi := b.Delay(tt.attempts, 1)
				if d.Delay < lo || d.Delay > hi {
					t.Fatalf("delay %v outside jitter range [%v, %v]", d.Delay, lo, hi)
				}
			}
		})
	}
}

func TestBackoffDelayIsBoundedForEveryAttempt(t *testing.T) {
	t.Parallel()
	b := outbox.ExponentialBackoff{Base: time.Second, Max: 5 * time.Minute, Multiplier: 2, Jitter: 1, MaxAttempts: 10}
	for _, attempts := range []int{-1, 0, 1, 2, 10, 62, 63, 64, 1000, math.MaxInt32, math.MaxInt} {
		for _, r := range []float64{0, 0.5, 0.999999} {
			d := b.Delay(attempts, r)
			if d < 0 || d > b.Max {
				t.Fatalf("Delay(%d, %v) = %v, outside [0, %v]", attempts, r, d, b.Max)
			}
		}
	}
	if got := b.Delay(0, 0.5); got != time.Second {
		t.Fatalf("Delay(0, no jitter) = %v, want 1s", got)
	}
	if got := b.Delay(3, 0.5); got != 8*time.Second {
		t.Fatalf("Delay(3, no jitter) = %v, want 8s", got)
	}
	if got := b.Delay(100, 0.5); got != b.Max {
		t.Fatalf("Delay(100) = %v, want the cap %v", got, b.Max)
	}
	huge := outbox.ExponentialBackoff{Base: time.Duration(math.MaxInt64), Max: time.Duration(math.MaxInt64), Multiplier: 1e300, Jitter: 1, MaxAttempts: 3}
	if d := huge.Delay(5, 0.99); d < 0 {
		t.Fatalf("overflowing delay went negative: %v", d)
	}
}
