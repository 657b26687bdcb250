package ops

import (
	"fmt"
	"strings"
	"time"
)

// ParseBefore parses a point in time given as RFC 3339 ("2024-05-01T12:00:00Z"),
// a date ("2024-05-01", midnight UTC) or a duration ago ("24h", "7d"),
// counted back from now.
func ParseBefore(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	d, err := ParseDuration(s)
	if err != nil || d == 0 {
		return time.Time{}, fmt.Errorf("%w %q: want an RFC 3339 time (2024-05-01T12:00:00Z), a date (2024-05-01) or a positive duration ago (24h, 7d)", ErrBadDuration, s)
	}
	return now.Add(-d), nil
}

// Before is a flag value holding a point in time, parsed by ParseBefore when
// the flag is set. The zero value is unset.
type Before struct {
	// Now is the clock that durations count back from; time.Now when nil.
	Now  func() time.Time
	raw  string
	time time.Time
}

// Set parses s.
func (b *Before) Set(s string) error {
	now := time.Now
	if b.Now != nil {
		now = b.Now
	}
	t, err := ParseBefore(s, now())
	if err != nil {
		return err
	}
	b.raw, b.time = s, t
	return nil
}

// String returns the value as given.
func (b *Before) String() string { return b.raw }

// Type names the value in --help.
func (b *Before) Type() string { return "time" }

// Time returns the point in time, zero when unset.
func (b *Before) Time() time.Time { return b.time }
