package doctor

import (
	"time"
)

// Verdict grades one check.
type Verdict string

// The verdicts, from good to bad.
const (
	OK   Verdict = "ok"
	Warn Verdict = "warn"
	Red  Verdict = "red"
)

// Check is the outcome of one check.
type Check struct {
	// Name names the check: "schema version", "claim plan", ...
	Name    string  `json:"name"`
	Verdict Verdict `json:"verdict"`
	// Found says what was measured, in one line.
	Found string `json:"found"`
	// Why explains why a warn or red verdict matters.
	Why string `json:"why,omitempty"`
	// Fix says what to do about it.
	Fix string `json:"fix,omitempty"`
}

// Thresholds grade the ages doctor measures: the oldest open transaction,
// how long a lapsed lease has gone unreclaimed, and how long the oldest due
// row has waited.
type Thresholds struct {
	// WarnAge is the age from which a check warns. Defaults to one minute.
	WarnAge time.Duration
	// RedAge is the age from which a check is red. Defaults to ten minutes.
	RedAge time.Duration
}

// Default thresholds.
const (
	DefaultWarnAge = time.Minute
	DefaultRedAge  = 10 * time.Minute
)

// withDefaults fills zero thresholds.
func (t Thresholds) withDefaults() Thresholds {
	if t.WarnAge <= 0 {
		t.WarnAge = DefaultWarnAge
	}
	if t.RedAge <= 0 {
		t.RedAge = DefaultRedAge
	}
	return t
}

// grade returns the verdict of an age.
func (t Thresholds) grade(age time.Duration) Verdict {
	switch {
	case age >= t.RedAge:
		return Red
	case age >= t.WarnAge:
		return Warn
	}
	return OK
}

// Report is the result of doctor: every check, and how many of each verdict.
type Report struct {
	// Store names the database and schema, secrets redacted.
	Store  string  `json:"store"`
	Checks []Check `json:"checks"`
	OK     int     `json:"ok"`
	Warn   int     `json:"warn"`
	Red    int     `json:"red"`
}

// NewReport counts the verdicts of checks.
func NewReport(store string, checks []Check) Report {
	r := Report{Store: store, Checks: checks}
	for _, c := range checks {
		switch c.Verdict {
		case OK:
			r.OK++
		case Warn:
			r.Warn++
		case Red:
			r.Red++
		}
	}
	return r
}

// Healthy reports whether no check is red.
func (r Report) Healthy() bool { return r.Red == 0 }

// Find returns the check named name.
func (r Report) Find(name string) (Check, bool) {
	for _, c := range r.Checks {
		if c.Name == name {
			return c, true
		}
	}
	return Check{}, false
}
