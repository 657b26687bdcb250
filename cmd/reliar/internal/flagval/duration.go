package flagval

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/reliar/reliar/outbox"
)

// Word is a word a flag takes for a value that cannot be written as a
// number: "forever", "off".
type Word struct {
	Text  string
	Value int64
}

// The words of the API convention.
var (
	// Forever keeps rows for ever: outbox.KeepForever.
	Forever = Word{"forever", int64(outbox.KeepForever)}
	// Off switches off what is on by default: outbox.Off.
	Off = Word{"off", outbox.Off}
)

// Day is 24 hours, the unit of the "d" suffix.
const Day = 24 * time.Hour

// ErrBadValue is matched (with errors.Is) by every refused value.
var ErrBadValue = errors.New("bad value")

// ParseDuration parses a Go duration ("90m", "1h30m") or a whole number of
// days ("14d"). Negative durations are refused.
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseInt(days, 10, 32)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("%w %q: want a whole number of days such as 14d, or a Go duration such as 36h", ErrBadValue, s)
		}
		return time.Duration(n) * Day, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%w %q: want a Go duration such as 90m or 36h, or days such as 14d", ErrBadValue, s)
	}
	if d < 0 {
		return 0, fmt.Errorf("%w %q: must not be negative", ErrBadValue, s)
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
	// time.Duration writes every unit from the largest down ("1h0m10s",
	// "2h0m0s"); drop only zero units at the end, never a digit of a
	// non-zero one ("1m30s" stays whole).
	s := d.Round(time.Second).String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// duration is a duration flag: zero is the default, a negative value is
// refused, and the words map to their values.
type duration struct {
	p     *time.Duration
	def   time.Duration
	max   time.Duration
	words []Word
}

// Duration defines a duration flag holding def until it is set; zero
// means def. With def 0 the flag stays zero until set, for a default that
// depends on other flags, which the usage should state. Negative durations
// are refused; words (Forever, Off) are taken for their values. A positive
// max bounds the value.
func Duration(fs *pflag.FlagSet, p *time.Duration, name string, def time.Duration, usage string, max time.Duration, words ...Word) {
	*p = def
	fs.Var(&duration{p: p, def: def, max: max, words: words}, name, usage)
}

func (v *duration) Set(s string) error {
	for _, w := range v.words {
		if strings.EqualFold(strings.TrimSpace(s), w.Text) {
			*v.p = time.Duration(w.Value)
			return nil
		}
	}
	d, err := ParseDuration(s)
	if err != nil {
		return v.explain(err)
	}
	if v.max > 0 && d > v.max {
		return fmt.Errorf("%w: at most %s", ErrBadValue, FormatDuration(v.max))
	}
	if d == 0 {
		d = v.def
	}
	*v.p = d
	return nil
}

// explain adds the words the flag takes to a parse error.
func (v *duration) explain(err error) error {
	if len(v.words) == 0 {
		return fmt.Errorf("%w (zero means the default)", err)
	}
	return fmt.Errorf("%w (zero means the default; %s)", err, wordList(v.words))
}

func wordList(words []Word) string {
	parts := make([]string, len(words))
	for i, w := range words {
		parts[i] = fmt.Sprintf("%q", w.Text)
	}
	return strings.Join(parts, " or ") + " for the other values"
}

func (v *duration) String() string {
	if v.p == nil || *v.p == 0 {
		return ""
	}
	for _, w := range v.words {
		if int64(*v.p) == w.Value {
			return w.Text
		}
	}
	return FormatDuration(*v.p)
}

// Type names the value in the help: "duration", or "duration|forever" for
// a flag that also takes a word.
func (v *duration) Type() string { return typeName("duration", v.words) }

// typeName is the type a flag's help shows: base, then the words it takes
// ("int|off"), so that the help never calls a flag that takes "off" an int.
func typeName(base string, words []Word) string {
	for _, w := range words {
		base += "|" + w.Text
	}
	return base
}
