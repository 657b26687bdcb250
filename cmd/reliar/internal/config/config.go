// Package config gives every command the same three sources of settings,
// in this order of precedence: command-line flags, then RELIAR_*
// environment variables, then an optional YAML file (--config, or the
// RELIAR_CONFIG variable).
//
// A flag --database-url is read from RELIAR_DATABASE_URL and from the file's
// key database-url (database_url also works). The file's top level holds
// only the keys every command shares — the database URL, the schema, the
// log level and format — and every other key sits in the section of the
// command it configures, which also wins over the top level:
//
//	log-level: info
//	database-url: postgres://app@db:5432/orders
//	relay:
//	  dispatchers: 2
//	purge:
//	  dead-retention: 30d
//	dead:
//	  list:
//	    limit: 500
//
// A key that no command reads where it stands — misspelt, or a command's
// key at the top level or under another command — is an error naming the
// key and the closest valid one (see [File.Check]), so a file never
// configures a command it was not meant for, and a typo never passes
// silently.
package config

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/pflag"
	"gopkg.in/yaml.v3"
)

// EnvPrefix starts the name of every environment variable the CLI reads.
const EnvPrefix = "RELIAR_"

// ErrInvalid is matched (with errors.Is) by every error about a value from
// the environment or the file, and about a file that cannot be used.
var ErrInvalid = errors.New("invalid configuration")

// Source says where a flag's value came from.
type Source string

// Sources of a flag's value, highest precedence first.
const (
	FromFlag    Source = "flag"
	FromEnv     Source = "env"
	FromFile    Source = "file"
	FromDefault Source = "default"
)

// ValueError reports a value from the environment or the file that its
// flag refuses.
type ValueError struct {
	// Flag is the flag's name, without dashes.
	Flag string
	// Origin is the environment variable or "file:key" the value came from.
	Origin string
	// Err is the flag's parse error.
	Err error
}

func (e *ValueError) Error() string {
	return fmt.Sprintf("invalid value for --%s from %s: %v", e.Flag, e.Origin, e.Err)
}

// Unwrap returns the flag's parse error.
func (e *ValueError) Unwrap() error { return e.Err }

// Is matches ErrInvalid.
func (e *ValueError) Is(target error) bool { return target == ErrInvalid }

// File is a parsed configuration file. The zero value and nil are an empty
// file.
type File struct {
	path   string
	values map[string]any
	// shared, once Check ran, are the only keys the top level gives values
	// to.
	shared []string
}

// Load reads and parses the YAML file at path; an empty path is an empty
// file. A file that is missing or not a mapping fails with an error
// matching ErrInvalid.
func Load(path string) (*File, error) {
	if path == "" {
		return &File{}, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: config file: %w", ErrInvalid, err)
	}
	return Parse(path, data)
}

// Parse parses YAML data read from path (used in messages only).
func Parse(path string, data []byte) (*File, error) {
	var values map[string]any
	if err := yaml.Unmarshal(data, &values); err != nil {
		return nil, fmt.Errorf("%w: config file %s: %w", ErrInvalid, path, err)
	}
	return &File{path: path, values: normalize(values)}, nil
}

// normalize spells every key with dashes, recursively.
func normalize(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if sub, ok := v.(map[string]any); ok {
			v = normalize(sub)
		}
		out[strings.ReplaceAll(k, "_", "-")] = v
	}
	return out
}

// lookup finds key for the command at section (its path below the root,
// such as ["dead", "list"]): the deepest mapping holding the key wins.
func (f *File) lookup(section []string, key string) (any, string, bool) {
	if f == nil || f.values == nil {
		return nil, "", false
	}
	levels := []map[string]any{f.values}
	for _, name := range section {
		sub, ok := levels[len(levels)-1][name].(map[string]any)
		if !ok {
			break
		}
		levels = append(levels, sub)
	}
	for i := len(levels) - 1; i >= 0; i-- {
		v, ok := levels[i][key]
		if !ok {
			continue
		}
		if i == 0 && f.shared != nil && !slices.Contains(f.shared, key) {
			// Only the shared keys live at the top level.
			continue
		}
		if _, isMap := v.(map[string]any); isMap && i == 0 {
			// A top-level mapping is a command's section, not a value.
			continue
		}
		where := strings.Join(append(append([]string(nil), section[:i]...), key), ".")
		return v, f.path + ":" + where, true
	}
	return nil, "", false
}

// EnvName returns the environment variable read for a flag:
// RELIAR_ followed by the flag's name in upper case with _ for -.
func EnvName(flag string) string {
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// Apply sets every flag of fs that was not given on the command line from
// the environment (getenv), else from the file f, and returns where each
// flag's value came from. section is the command's path below the root.
// Flags named in skip are left alone. An empty environment variable counts
// as unset. A value its flag refuses fails with a *ValueError.
func Apply(fs *pflag.FlagSet, section []string, getenv func(string) (string, bool), f *File, skip ...string) (map[string]Source, error) {
	sources := make(map[string]Source)
	var firstErr error
	fs.VisitAll(func(fl *pflag.Flag) {
		if firstErr != nil {
			return
		}
		for _, s := range skip {
			if fl.Name == s {
				return
			}
		}
		if fl.Changed {
			sources[fl.Name] = FromFlag
			return
		}
		if name := EnvName(fl.Name); getenv != nil {
			if v, ok := getenv(name); ok && v != "" {
				if err := fs.Set(fl.Name, v); err != nil {
					firstErr = &ValueError{Flag: fl.Name, Origin: name, Err: err}
					return
				}
				sources[fl.Name] = FromEnv
				return
			}
		}
		if v, origin, ok := f.lookup(section, fl.Name); ok {
			s, err := scalar(v)
			if err == nil {
				err = fs.Set(fl.Name, s)
			}
			if err != nil {
				firstErr = &ValueError{Flag: fl.Name, Origin: origin, Err: err}
				return
			}
			sources[fl.Name] = FromFile
			return
		}
		sources[fl.Name] = FromDefault
	})
	return sources, firstErr
}

// scalar turns a YAML value into a flag's text: lists join with commas.
func scalar(v any) (string, error) {
	switch x := v.(type) {
	case nil:
		return "", nil
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return "", fmt.Errorf("a mapping (keys %s) where a value was expected", strings.Join(keys, ", "))
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			s, err := scalar(e)
			if err != nil {
				return "", err
			}
			parts[i] = s
		}
		return strings.Join(parts, ","), nil
	}
	return fmt.Sprint(v), nil
}
