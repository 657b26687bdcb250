package cli

import (
	"errors"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/reliar/reliar/cmd/reliar/internal/config"
	"github.com/reliar/reliar/cmd/reliar/internal/flagval"
	"github.com/reliar/reliar/outbox"
)

// relayCommand returns the relay command of the real command tree.
func relayCommand(t *testing.T) *cobra.Command {
	t.Helper()
	root := (&App{}).rootCommand()
	cmd, _, err := root.Find([]string{"relay"})
	if err != nil {
		t.Fatal(err)
	}
	return cmd
}

// TestEverySettingHasAFlag: every field of outbox.Settings is set by a
// relay flag, which its RELIAR_* variable and its key in the relay section
// of a configuration file set too.
func TestEverySettingHasAFlag(t *testing.T) {
	declared := map[string]relaySetting{}
	for _, s := range relaySettings {
		if s.scope == dispatcherSetting {
			field, _, _ := strings.Cut(s.field, ".")
			declared[field] = s
		}
	}
	cmd := relayCommand(t)
	layout := configLayout(cmd.Root())
	typ := reflect.TypeFor[outbox.Settings]()
	for i := range typ.NumField() {
		field := typ.Field(i).Name
		s, ok := declared[field]
		if !ok {
			t.Errorf("outbox.Settings.%s has no relay flag", field)
			continue
		}
		if cmd.Flags().Lookup(s.flag) == nil {
			t.Errorf("outbox.Settings.%s: no flag --%s on reliar relay", field, s.flag)
		}
		if !slices.Contains(layout.Sections["relay"].Keys, s.flag) {
			t.Errorf("outbox.Settings.%s: the file's relay section has no key %s", field, s.flag)
		}
	}
	// Each flag of relaySettings takes its value from its variable, and
	// from its key in the file.
	for _, s := range relaySettings {
		value := "7"
		switch s.bind(&relayFlags{}).(type) {
		case *time.Duration:
			value = "7s"
		case *string:
			value = "tenant"
		}
		for _, from := range []string{"env", "file"} {
			cmd := relayCommand(t)
			env := func(name string) (string, bool) {
				return value, from == "env" && name == config.EnvName(s.flag)
			}
			file, err := config.Parse("relay.yaml", []byte("relay:\n  "+s.flag+": "+value+"\n"))
			if err != nil {
				t.Fatal(err)
			}
			if from == "env" {
				file = nil
			}
			sources, err := config.Apply(cmd.Flags(), []string{"relay"}, env, file)
			if err != nil {
				t.Fatalf("--%s from %s: %v", s.flag, from, err)
			}
			want := map[string]config.Source{"env": config.FromEnv, "file": config.FromFile}[from]
			if sources[s.flag] != want {
				t.Errorf("--%s: source %q, want %q (variable %s, key relay.%s)", s.flag, sources[s.flag], want, config.EnvName(s.flag), s.flag)
			}
		}
	}
}

// invalid sets field (a path such as Retry.MaxAttempts) of v to a value
// Validate refuses.
func invalid(t *testing.T, v reflect.Value, field string) {
	t.Helper()
	head, rest, nested := strings.Cut(field, ".")
	f := v.FieldByName(head)
	if nested {
		// Retry: a backoff whose field is refused.
		b := reflect.New(reflect.TypeFor[outbox.ExponentialBackoff]()).Elem()
		invalid(t, b, rest)
		f.Set(b)
		return
	}
	switch f.Kind() {
	case reflect.Int, reflect.Int64:
		f.SetInt(-7)
	case reflect.Uint8, reflect.Uint, reflect.Uint32:
		f.SetUint(42)
	default:
		t.Fatalf("no invalid value for a %s (%s)", f.Kind(), field)
	}
}

// goNames matches a Go name of the settings in a message meant for the
// command line.
var goNames = regexp.MustCompile(`\b(Settings|KeepForever|Off|Fairness[A-Z]\w*|Retry\.)|\b[A-Z][a-z]+[A-Z]\w*\b`)

// TestSettingErrorsNameTheirFlag: the error of every setting the relay
// declares, as Validate reports it, names the setting's flag and no Go
// name.
func TestSettingErrorsNameTheirFlag(t *testing.T) {
	for _, s := range relaySettings {
		if s.field == "WorkerID" { // any worker id is valid
			continue
		}
		t.Run(s.flag, func(t *testing.T) {
			var err error
			if s.scope == dispatcherSetting {
				var v outbox.Settings
				invalid(t, reflect.ValueOf(&v).Elem(), s.field)
				err = namedFlags(dispatcherSetting, v.Validate(outbox.Capabilities{PerKeyOrdering: true, TenantFairness: true}))
			} else {
				var v outbox.MaintainerSettings
				invalid(t, reflect.ValueOf(&v).Elem(), s.field)
				err = namedFlags(maintainerSetting, v.Validate())
			}
			if err == nil {
				t.Fatalf("%s invalid: Validate passed", s.field)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "--"+s.flag+" ") || !errors.Is(err, outbox.ErrInvalidSettings) {
				t.Errorf("error %q does not start with --%s", msg, s.flag)
			}
			if m := goNames.FindString(msg); m != "" {
				t.Errorf("error %q names %q, a Go name, where a flag user needs a flag", msg, m)
			}
		})
	}
	// A reason that names another setting names its flag too.
	err := namedFlags(dispatcherSetting, outbox.Settings{Lease: time.Second, PublishTimeout: 2 * time.Second}.Validate(outbox.Capabilities{}))
	if !strings.Contains(err.Error(), "--lease (1s) must be longer than --publish-timeout (2s)") {
		t.Errorf("lease error %q", err)
	}
}

// TestRelayHelpStatesRealDefaults: the default each setting's flag states
// in reliar relay --help is the library's, and a flag that takes "off" or
// "forever" shows a type that says so.
func TestRelayHelpStatesRealDefaults(t *testing.T) {
	r := run(t, nil, "relay", "--help")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	d, m := outbox.DefaultSettings(), outbox.DefaultMaintainerSettings()
	real := map[string]string{ // read here, not through relaySettings
		"batch-size":           strconv.Itoa(d.BatchSize),
		"max-in-flight":        strconv.Itoa(d.MaxInFlight),
		"poll-interval":        flagval.FormatDuration(d.PollInterval),
		"idle-poll-interval":   flagval.FormatDuration(d.IdlePollInterval),
		"lease":                flagval.FormatDuration(d.Lease),
		"publish-timeout":      flagval.FormatDuration(d.PublishTimeout),
		"store-timeout":        flagval.FormatDuration(d.StoreTimeout),
		"drain-timeout":        flagval.FormatDuration(d.DrainTimeout),
		"stats-interval":       flagval.FormatDuration(d.StatsInterval),
		"max-attempts":         strconv.Itoa(outbox.DefaultBackoff().MaxAttempts),
		"max-claims":           strconv.Itoa(d.MaxClaims),
		"breaker-threshold":    strconv.Itoa(d.BreakerThreshold),
		"ordering":             d.Ordering.String(),
		"fair":                 d.Fairness.String(),
		"published-retention":  flagval.FormatDuration(m.PublishedRetention),
		"dead-retention":       flagval.FormatDuration(m.DeadRetention),
		"maintenance-interval": flagval.FormatDuration(m.Interval),
	}
	lines := map[string]string{}
	for line := range strings.SplitSeq(r.stdout, "\n") {
		if f := strings.Fields(line); len(f) > 1 && strings.HasPrefix(f[0], "--") {
			lines[strings.TrimPrefix(f[0], "--")] = line
		}
	}
	for _, s := range relaySettings {
		line, ok := lines[s.flag]
		if !ok {
			t.Errorf("--%s is not in the help", s.flag)
			continue
		}
		if want, ok := real[s.flag]; ok && !strings.Contains(line, "(default "+want) {
			t.Errorf("--%s: help %q, want the default %s", s.flag, line, want)
		}
		fields := strings.Fields(line)
		for _, w := range s.words {
			if !strings.HasSuffix(fields[1], "|"+w.Text) {
				t.Errorf("--%s takes %q, but its help shows the type %q", s.flag, w.Text, fields[1])
			}
		}
	}
	// The log level the relay runs at, in its own words and on the
	// global flag.
	if !strings.Contains(r.stdout, "at "+relayLogLevel+" by default") ||
		!regexp.MustCompile(`--log-level string .*\(default "`+relayLogLevel+`"\)`).MatchString(r.stdout) {
		t.Errorf("relay --help does not state the log level %s on --log-level:\n%s", relayLogLevel, r.stdout)
	}
	if r := run(t, nil, "stats", "--help"); !strings.Contains(r.stdout, `(default "warn")`) {
		t.Errorf("the relay's help changed the --log-level default of other commands:\n%s", r.stdout)
	}
}
