package config

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Layout says which keys a configuration file may hold: the Shared keys at
// its top level (the database URL, the schema, the log level and format),
// and every other key in the Section of the command it configures.
type Layout struct {
	// Shared are the keys of the top level.
	Shared []string
	// Sections are the commands' sections, by command name.
	Sections map[string]*Section
	// CommandLineOnly are flags that only the command line may set (--yes,
	// --force): a file or the environment never confirms anything.
	CommandLineOnly []string
}

// Section is the part of a file that configures one command: its flags'
// keys, and the sections of its subcommands (dead: list:, ...).
type Section struct {
	Keys     []string
	Sections map[string]*Section
}

// KeyError reports a key of a configuration file that no command reads
// where it stands: unknown, misplaced, or holding a value of the wrong
// shape. It matches ErrInvalid.
type KeyError struct {
	// File is the file's path.
	File string
	// Key is the key's path in the file, such as "relay.dispatchrs".
	Key string
	// Problem says what is wrong.
	Problem string
	// Suggest is the closest valid key, such as "relay.dispatchers"; empty
	// when none is near.
	Suggest string
	// Homes are the places a misplaced key belongs, such as
	// "purge.dead-retention"; Problem names them.
	Homes []string
}

func (e *KeyError) Error() string { return fmt.Sprintf("config file %s: %s", e.File, e.describe()) }

// describe is the message without the file's name.
func (e *KeyError) describe() string {
	msg := fmt.Sprintf("key %q %s", e.Key, e.Problem)
	if e.Suggest != "" && len(e.Homes) == 0 {
		msg += fmt.Sprintf(" (did you mean %q?)", e.Suggest)
	}
	return msg
}

// Is matches ErrInvalid.
func (e *KeyError) Is(target error) bool { return target == ErrInvalid }

// CheckError holds every problem Check found in one file. It matches
// ErrInvalid, and errors.As finds each *KeyError.
type CheckError struct {
	File     string
	Problems []*KeyError
}

func (e *CheckError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.describe()
	}
	return fmt.Sprintf("config file %s: %s", e.File, strings.Join(parts, "; "))
}

// Unwrap returns the problems.
func (e *CheckError) Unwrap() []error {
	out := make([]error, len(e.Problems))
	for i, p := range e.Problems {
		out[i] = p
	}
	return out
}

// Check reports every key of f that l does not allow where it stands, all
// at once (a *CheckError holding a *KeyError per key, sorted by path), and
// remembers l: from then on the top level only gives values to
// shared keys.
func (f *File) Check(l Layout) error {
	if f == nil {
		return nil
	}
	f.shared = l.Shared
	var errs []*KeyError
	bad := func(key, problem, suggest string, homes ...string) {
		errs = append(errs, &KeyError{File: f.path, Key: key, Problem: problem, Suggest: suggest, Homes: homes})
	}
	top := &Section{Keys: l.Shared, Sections: l.Sections}
	var walk func(path []string, values map[string]any, s *Section)
	walk = func(path []string, values map[string]any, s *Section) {
		for key, v := range values {
			full := strings.Join(append(slices.Clone(path), key), ".")
			switch {
			case slices.Contains(l.CommandLineOnly, key):
				bad(full, fmt.Sprintf("cannot be set in a file: give --%s on the command line", key), "")
			case s.Sections[key] != nil:
				sub, ok := v.(map[string]any)
				if !ok && v != nil {
					bad(full, fmt.Sprintf("is the section of 'reliar %s' and holds a mapping of its settings, not %s",
						strings.Join(append(slices.Clone(path), key), " "), describe(v)), exampleKey(key, s.Sections[key], v))
					continue
				}
				walk(append(slices.Clone(path), key), sub, s.Sections[key])
			case slices.Contains(s.Keys, key):
				if _, isMap := v.(map[string]any); isMap {
					bad(full, "holds a mapping where a value belongs", "")
				}
			default:
				problem, suggest, homes := misplaced(top, path, key)
				bad(full, problem, suggest, homes...)
			}
		}
	}
	walk(nil, f.values, top)
	if len(errs) == 0 {
		return nil
	}
	sort.Slice(errs, func(i, j int) bool { return errs[i].Key < errs[j].Key })
	return &CheckError{File: f.path, Problems: errs}
}

// describe names a YAML value for messages.
func describe(v any) string {
	switch x := v.(type) {
	case []any:
		return "a list"
	case string:
		return fmt.Sprintf("%q", x)
	}
	return fmt.Sprint(v)
}

// exampleKey shows the shape of a section given a scalar v: the section
// as a mapping of its first key to v.
func exampleKey(name string, s *Section, v any) string {
	if len(s.Keys) == 0 {
		return name + ": {}"
	}
	keys := slices.Sorted(slices.Values(s.Keys))
	return fmt.Sprintf("%s: {%s: %v}", name, keys[0], v)
}

// misplaced explains a key that is not valid at path: it belongs to other
// sections (which are named), or it is unknown and the closest valid key
// is suggested.
func misplaced(top *Section, path []string, key string) (problem, suggest string, homes []string) {
	var near []candidate
	var visit func(p []string, s *Section)
	visit = func(p []string, s *Section) {
		for _, k := range s.Keys {
			full := strings.Join(append(slices.Clone(p), k), ".")
			if k == key {
				homes = append(homes, full)
			}
			near = append(near, candidate{full, k, sameScope(p, path)})
		}
		for name, sub := range s.Sections {
			full := strings.Join(append(slices.Clone(p), name), ".")
			near = append(near, candidate{full, name, sameScope(p, path)})
			visit(append(slices.Clone(p), name), sub)
		}
	}
	visit(nil, top)
	if len(homes) > 0 {
		sort.Strings(homes)
		where := "the top level"
		if len(path) > 0 {
			where = strings.Join(path, ".")
		}
		return fmt.Sprintf("does not belong at %s: it belongs under %s", where, strings.Join(homes, ", ")), homes[0], homes
	}
	return "is not a setting of any command", closest(key, near), nil
}

// candidate is a valid key for suggestions: its full path, its last name,
// and whether it sits in the section the bad key sits in.
type candidate struct {
	path, name string
	here       bool
}

func sameScope(a, b []string) bool { return slices.Equal(a, b) }

// closest returns the path of the candidate whose name is the fewest edits
// from key, preferring the key's own section on a tie; none when even the
// best needs more edits than half the key's length (and at least 3).
func closest(key string, cs []candidate) string {
	best, bestD := "", -1
	bestHere := false
	sort.Slice(cs, func(i, j int) bool { return cs[i].path < cs[j].path })
	for _, c := range cs {
		d := editDistance(key, c.name)
		if bestD < 0 || d < bestD || d == bestD && c.here && !bestHere {
			best, bestD, bestHere = c.path, d, c.here
		}
	}
	if bestD < 0 || bestD > max(3, len(key)/2) {
		return ""
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Closest returns the name of names that is the fewest edits from word,
// by the rule of the file's key suggestions; "" when none is near.
func Closest(word string, names []string) string {
	cs := make([]candidate, len(names))
	for i, n := range names {
		cs[i] = candidate{path: n, name: n}
	}
	return closest(word, cs)
}
