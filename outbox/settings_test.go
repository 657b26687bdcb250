package outbox_test

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/outbox/memstore"
)

func TestSettingsConfigErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(s *outbox.Settings)
		caps   outbox.Capabilities
		field  string
	}{
		{"zero MaxInFlight", func(s *outbox.Settings) { s.MaxInFlight = 0 }, outbox.Capabilities{}, "MaxInFlight"},
		{"negative MaxInFlight", func(s *outbox.Settings) { s.MaxInFlight = -1 }, outbox.Capabilities{}, "MaxInFlight"},
		{"zero BatchSize", func(s *outbox.Settings) { s.BatchSize = 0 }, outbox.Capabilities{}, "BatchSize"},
		{"zero PollInterval", func(s *outbox.Settings) { s.PollInterval = 0 }, outbox.Capabilities{}, "PollInterval"},
		{"zero IdlePollInterval", func(s *outbox.Settings) { s.IdlePollInterval = 0 }, outbox.Capabilities{}, "IdlePollInterval"},
		{"lease equal to publish timeout", func(s *outbox.Settings) { s.Lease = s.PublishTimeout }, outbox.Capabilities{}, "Lease"},
		{"lease shorter than publish timeout", func(s *outbox.Settings) { s.Lease = s.PublishTimeout / 2 }, outbox.Capabilities{}, "Lease"},
		{"store timeout at half the lease", func(s *outbox.Settings) { s.StoreTimeout = s.Lease / 2 }, outbox.Capabilities{}, "StoreTimeout"},
		{"drain timeout equal to store timeout", func(s *outbox.Settings) { s.DrainTimeout = s.StoreTimeout }, outbox.Capabilities{}, "DrainTimeout"},
		{"zero MaxClaims", func(s *outbox.Settings) { s.MaxClaims = 0 }, outbox.Capabilities{}, "MaxClaims"},
		{"negative breaker threshold", func(s *outbox.Settings) { s.BreakerThreshold = -1 }, outbox.Capabilities{}, "BreakerThreshold"},
		{"nil retry policy", func(s *outbox.Settings) { s.Retry = nil }, outbox.Capabilities{}, "Retry"},
		{"jitter above one", func(s *outbox.Settings) { s.Retry = backoff(func(b *outbox.ExponentialBackoff) { b.Jitter = 1.5 }) }, outbox.Capabilities{}, "Retry.Jitter"},
		{"negative jitter", func(s *outbox.Settings) { s.Retry = backoff(func(b *outbox.ExponentialBackoff) { b.Jitter = -0.1 }) }, outbox.Capabilities{}, "Retry.Jitter"},
		{"NaN jitter", func(s *outbox.Settings) {
			s.Retry = backoff(func(b *outbox.ExponentialBackoff) { b.Jitter = math.NaN() })
		}, outbox.Capabilities{}, "Retry.Jitter"},
		{"zero max attempts", func(s *outbox.Settings) { s.Retry = backoff(func(b *outbox.ExponentialBackoff) { b.MaxAttempts = 0 }) }, outbox.Capabilities{}, "Retry.MaxAttempts"},
		{"zero base", func(s *outbox.Settings) { s.Retry = backoff(func(b *outbox.ExponentialBackoff) { b.Base = 0 }) }, outbox.Capabilities{}, "Retry.Base"},
		{"pointer backoff validated too", func(s *outbox.Settings) {
			b := outbox.DefaultBackoff()
			b.MaxAttempts = 0
			s.Retry = &b
		}, outbox.Capabilities{}, "Retry.MaxAttempts"},
		{"per-key ordering without the capability", func(s *outbox.Settings) { s.Ordering = outbox.PerKey }, outbox.Capabilities{}, "Ordering"},
		{"unknown ordering", func(s *outbox.Settings) { s.Ordering = outbox.Ordering(7) }, outbox.Capabilities{PerKeyOrdering: true}, "Ordering"},
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
			d, err := outbox.New(memstore.New(), newFakePublisher(nil), s)
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
	if _, err := outbox.New(memstore.New(), nil, outbox.DefaultSettings()); !errors.Is(err, outbox.ErrInvalidSettings) {
		t.Fatalf("nil publisher: %v", err)
	}
	if _, err := outbox.New(memstore.New(), newFakePublisher(nil), outbox.Settings{}); !errors.Is(err, outbox.ErrInvalidSettings) {
		t.Fatalf("zero settings: %v", err)
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
