package ops

import (
	"time"

	"github.com/reliar/reliar/cmd/reliar/internal/flagval"
)

// Day is 24 hours, the unit of the "d" suffix ParseDuration accepts.
const Day = flagval.Day

// ErrBadDuration is matched (with errors.Is) by every error of ParseDuration.
var ErrBadDuration = flagval.ErrBadValue

// ParseDuration parses a Go duration ("90m", "1h30m") or a whole number of
// days ("14d"), which retention periods are usually given in. Negative
// durations are refused.
func ParseDuration(s string) (time.Duration, error) { return flagval.ParseDuration(s) }

// FormatDuration writes d the way ParseDuration reads it, short: "14d",
// "24h", "1h30m", "4.2s", "15ms".
func FormatDuration(d time.Duration) string { return flagval.FormatDuration(d) }
