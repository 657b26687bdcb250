package ops

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// Day is 24 hours, the unit of the "d" suffix ParseDuration accepts.
const Day = 24 * time.Hour

// ErrBadDuration is matched (with errors.Is) by every error of ParseDuration.
var ErrBadDuration = errors.New("bad duration")

// ParseDuration parses a Go duration ("90m", "1h30m") or a whole number of
// days ("14d"), which retention periods are usually given in. Negative
// durations are refused.
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseInt(days, 10, 32)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("%w %q: want a whole number of days such as 14d, or a Go duration such as 36h", ErrBadDuration, s)
		}
		return time.Duration(n) * Day, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%w %q: want a Go duration such as 90m or 36h, or days such as 14d", ErrBadDuration, s)
	}
	if d < 0 {
		return 0, fmt.Errorf("%w %q: must not be negative", ErrBadDuration, s)
	}
	return d, nil
}

// FormatDuration writes d the way ParseDuration reads it, short: "14d",
// "24h", "1h30m", "4.2s", "15ms".
func FormatDuration(d time.Duration) string {
	switch {
	case d == 0:
		return "0s"
	case d < 0:
		return "-" + FormatDuration(-d)
	case d%Day == 0:
		return strconv.FormatInt(int64(d/Day), 10) + "d"
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	}
	s := d.Round(time.Second).String()
	s = strings.TrimSuffix(s, "0s")
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// durationValue is a pflag.Value parsed by ParseDuration.
type durationValue time.Duration

// DurationVar defines a duration flag that also accepts days ("14d").
func DurationVar(fs *pflag.FlagSet, p *time.Duration, name string, value time.Duration, usage string) {
	*p = value
	fs.Var((*durationValue)(p), name, usage)
}

func (v *durationValue) Set(s string) error {
	d, err := ParseDuration(s)
	if err != nil {
		return err
	}
	*v = durationValue(d)
	return nil
}

func (v *durationValue) String() string { return FormatDuration(time.Duration(*v)) }

func (v *durationValue) Type() string { return "duration" }
