package flagval

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
)

// integer is an int flag: zero is the default, a negative value is refused
// unless it is a word's, and a positive max bounds it.
type integer struct {
	p     *int
	def   int
	max   int
	words []Word
}

// Int defines an int flag holding def until it is set; zero means def.
// With def 0 the flag stays zero until set, for a default that depends on
// other flags, which the usage should state. Negative values are refused;
// words (Off) are taken for their values. A positive max bounds the value.
func Int(fs *pflag.FlagSet, p *int, name string, def int, usage string, max int, words ...Word) {
	*p = def
	fs.Var(&integer{p: p, def: def, max: max, words: words}, name, usage)
}

func (v *integer) Set(s string) error {
	s = strings.TrimSpace(s)
	for _, w := range v.words {
		if strings.EqualFold(s, w.Text) {
			*v.p = int(w.Value)
			return nil
		}
	}
	n, err := strconv.Atoi(s)
	switch {
	case err != nil:
		return fmt.Errorf("%w %q: want a whole number", ErrBadValue, s)
	case n < 0 && len(v.words) > 0:
		return fmt.Errorf("%w %d: must not be negative (zero means the default; %s)", ErrBadValue, n, wordList(v.words))
	case n < 0:
		return fmt.Errorf("%w %d: must not be negative (zero means the default)", ErrBadValue, n)
	case v.max > 0 && n > v.max:
		return fmt.Errorf("%w %d: at most %d", ErrBadValue, n, v.max)
	case n == 0:
		n = v.def
	}
	*v.p = n
	return nil
}

func (v *integer) String() string {
	if v.p == nil || *v.p == 0 {
		return ""
	}
	for _, w := range v.words {
		if int64(*v.p) == w.Value {
			return w.Text
		}
	}
	return strconv.Itoa(*v.p)
}

// Type names the value in the help: "int", or "int|off" for a flag that
// also takes a word.
func (v *integer) Type() string { return typeName("int", v.words) }
