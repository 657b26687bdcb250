package outbox

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/reliar/reliar"
)

// Failure describes one failed publish, for a RetryPolicy.
type Failure struct {
	// Err is the publisher's error.
	Err error
	// Kind is the error's class: reliar.KindOf(Err).
	Kind reliar.FailureKind
	// Attempts counts the outcomes recorded for the row before this one.
	Attempts int
	// MessageType is the row's message type.
	MessageType string
}

// Decision is a RetryPolicy's verdict: retry after Delay, or dead with
// Reason when Reason is not empty.
type Decision struct {
	Delay  time.Duration
	Reason DeadReason
}

// Dead reports whether the decision moves the row to dead.
func (d Decision) Dead() bool { return d.Reason != "" }

// RetryAfter is the decision to try again after delay.
func RetryAfter(delay time.Duration) Decision { return Decision{Delay: max(delay, 0)} }

// DeadLetter is the decision to move the row to dead with reason.
func DeadLetter(reason DeadReason) Decision { return Decision{Reason: reason} }

// RetryPolicy decides what happens to a row after a failed publish.
type RetryPolicy interface {
	Decide(f Failure) Decision
}

// RetryPolicyFunc adapts a function to RetryPolicy.
type RetryPolicyFunc func(f Failure) Decision

// Decide calls p(f).
func (p RetryPolicyFunc) Decide(f Failure) Decision { return p(f) }

// ExponentialBackoff retries transient failures after Base × Multiplier^attempts
// (capped at Max, ± Jitter), and moves a row to dead at once on a permanent
// failure or once it reaches MaxAttempts outcomes. Its zero fields take the
// defaults of DefaultBackoff, so ExponentialBackoff{MaxAttempts: 3} is a
// complete policy.
type ExponentialBackoff struct {
	// Base is the first delay. Defaults to 1s.
	Base time.Duration
	// Max caps every delay. Defaults to 5m, or Base when that is longer.
	Max time.Duration
	// Multiplier grows the delay per attempt; values below 1 are taken as 1.
	// Defaults to 2.
	Multiplier float64
	// Jitter spreads each delay by up to ± that fraction, within [0, 1]; Off
	// spreads none. Defaults to 0.2.
	Jitter float64
	// MaxAttempts is the number of attempts after which a row goes dead
	// (reason max_attempts); Off retries transient failures for ever (at
	// most every Max). Defaults to 10.
	MaxAttempts int
}

// DefaultBackoff returns the default retry policy: Base 1s, Max 5m,
// Multiplier 2, Jitter 0.2, MaxAttempts 10.
func DefaultBackoff() ExponentialBackoff { return ExponentialBackoff{}.WithDefaults() }

// WithDefaults returns a copy of b with every zero field set to its default.
func (b ExponentialBackoff) WithDefaults() ExponentialBackoff {
	if b.Base == 0 {
		b.Base = time.Second
	}
	if b.Max == 0 {
		b.Max = max(5*time.Minute, b.Base)
	}
	if b.Multiplier == 0 {
		b.Multiplier = 2
	}
	if b.Jitter == 0 {
		b.Jitter = 0.2
	}
	if b.MaxAttempts == 0 {
		b.MaxAttempts = 10
	}
	return b
}

// problems returns every invalid field of b (after defaults).
func (b ExponentialBackoff) problems() problems {
	b = b.WithDefaults()
	var p problems
	if b.Base < 0 {
		p.add("Retry.Base", "must be positive")
	}
	if b.Max < b.Base {
		p.add("Retry.Max", "(%v) must not be below Base (%v)", b.Max, b.Base)
	}
	if math.IsNaN(b.Jitter) || (b.Jitter < 0 && b.Jitter != Off) || b.Jitter > 1 {
		p.add("Retry.Jitter", "(%v) must be within [0, 1], or Off", b.Jitter)
	}
	if math.IsNaN(b.Multiplier) || math.IsInf(b.Multiplier, 0) {
		p.add("Retry.Multiplier", "must be a finite number")
	}
	if b.MaxAttempts < 0 && b.MaxAttempts != Off {
		p.add("Retry.MaxAttempts", "(%d) must be positive, or Off", b.MaxAttempts)
	}
	return p
}

// Decide implements RetryPolicy.
func (b ExponentialBackoff) Decide(f Failure) Decision {
	b = b.WithDefaults()
	if f.Kind == reliar.FailurePermanent {
		return DeadLetter(DeadPermanent)
	}
	if b.MaxAttempts > 0 && f.Attempts+1 >= b.MaxAttempts {
		return DeadLetter(DeadMaxAttempts)
	}
	return RetryAfter(b.Delay(f.Attempts, rand.Float64()))
}

// Delay is the delay after attempts recorded outcomes, with r in [0, 1)
// choosing the jitter (0.5 means none). It is computed in floating point and
// clamped before conversion, so no attempt count overflows: the result is
// never negative and never above Max.
func (b ExponentialBackoff) Delay(attempts int, r float64) time.Duration {
	b = b.WithDefaults()
	jitter := max(b.Jitter, 0)
	mult := b.Multiplier
	if mult < 1 || math.IsNaN(mult) {
		mult = 1
	}
	maxD := float64(b.Max)
	d := float64(b.Base) * math.Pow(mult, float64(max(attempts, 0)))
	if math.IsNaN(d) || d > maxD {
		d = maxD
	}
	d *= 1 + jitter*(2*r-1)
	switch {
	case math.IsNaN(d) || d <= 0:
		return 0
	case d >= maxD:
		// Return the cap itself: float64(Max) may round above the largest
		// Duration, and converting it back would overflow.
		return b.Max
	}
	return time.Duration(d)
}
