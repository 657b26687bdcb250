package cli

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/reliar/reliar/cmd/reliar/internal/flagval"
	"github.com/reliar/reliar/outbox"
)

// settingScope tells which settings value a relay setting belongs to.
type settingScope int

const (
	// dispatcherSetting fills outbox.Settings.
	dispatcherSetting settingScope = iota
	// maintainerSetting fills outbox.MaintainerSettings.
	maintainerSetting
)

// relaySetting declares one relay flag that fills a dispatcher or
// maintainer setting, once: the flag's name (its RELIAR_* variable,
// config.EnvName, and its key in the file's relay section follow from it),
// the field it sets, its type (from the variable it binds), its help, the
// default the help states (read from the library's own defaults) and the
// words it takes. The flags, their help and the flag names in the
// settings' errors are all derived from relaySettings.
type relaySetting struct {
	flag  string
	scope settingScope
	// field names the setting as *outbox.ConfigError does: "Lease",
	// "Retry.MaxAttempts", "Interval".
	field string
	help  string
	// def is the default, from the library's defaults; derived says how
	// other flags change it ("or --max-in-flight when lower").
	def     func(outbox.Settings, outbox.MaintainerSettings) string
	derived string
	max     int
	words   []flagval.Word
	// bind returns the variable the flag sets: *int, *time.Duration or
	// *string.
	bind func(*relayFlags) any
}

// usage is the flag's help, with its default.
func (s relaySetting) usage() string {
	def := s.def(outbox.DefaultSettings(), outbox.DefaultMaintainerSettings())
	return fmt.Sprintf("%s (default %s%s)", s.help, def, s.derived)
}

// declare defines the flag on fs.
func (s relaySetting) declare(fs *pflag.FlagSet, f *relayFlags) {
	switch p := s.bind(f).(type) {
	case *int:
		flagval.Int(fs, p, s.flag, 0, s.usage(), s.max, s.words...)
	case *time.Duration:
		flagval.Duration(fs, p, s.flag, 0, s.usage(), 0, s.words...)
	case *string:
		fs.StringVar(p, s.flag, "", s.usage())
	default:
		panic(fmt.Sprintf("relay setting --%s binds a %T", s.flag, p))
	}
}

// fieldValue reads the setting's field (Retry.MaxAttempts through the
// default backoff) from the defaults, for the help.
func fieldValue(field string, v any) any {
	rv := reflect.ValueOf(v)
	for name := range strings.SplitSeq(field, ".") {
		if rv.Kind() == reflect.Interface {
			rv = rv.Elem()
		}
		rv = rv.FieldByName(name)
	}
	return rv.Interface()
}

// defaultOf states a setting's default the way its flag takes it.
func defaultOf(scope settingScope, field string) func(outbox.Settings, outbox.MaintainerSettings) string {
	return func(d outbox.Settings, m outbox.MaintainerSettings) string {
		var v any = d
		if scope == maintainerSetting {
			v = m
		}
		switch x := fieldValue(field, v).(type) {
		case time.Duration:
			return flagval.FormatDuration(x)
		case int:
			return strconv.Itoa(x)
		case fmt.Stringer:
			return x.String()
		default:
			return fmt.Sprint(x)
		}
	}
}

// stated is a default the library cannot report, such as one taken from
// the host.
func stated(text string) func(outbox.Settings, outbox.MaintainerSettings) string {
	return func(outbox.Settings, outbox.MaintainerSettings) string { return text }
}

// relaySettings are the relay's settings flags, in the order of the help.
var relaySettings = []relaySetting{
	{flag: "worker-id", field: "WorkerID", help: "prefix of the locked_by value the dispatchers write; each run appends a random suffix",
		def: stated("<hostname>-<pid>"), bind: func(f *relayFlags) any { return &f.workerID }},
	{flag: "batch-size", field: "BatchSize", help: "rows one claim asks for",
		derived: ", or --max-in-flight when lower", bind: func(f *relayFlags) any { return &f.batchSize }},
	{flag: "max-in-flight", field: "MaxInFlight", help: "rows a dispatcher holds at once",
		derived: ": three claims, 3 × --batch-size", bind: func(f *relayFlags) any { return &f.maxInFlight }},
	{flag: "poll-interval", field: "PollInterval", help: "wait after a claim that returned fewer rows than asked",
		bind: func(f *relayFlags) any { return &f.pollInterval }},
	{flag: "idle-poll-interval", field: "IdlePollInterval", help: "wait after an empty claim, and between start-up attempts",
		derived: ", or --poll-interval when longer", bind: func(f *relayFlags) any { return &f.idlePollInterval }},
	{flag: "lease", field: "Lease", help: "how long a claim holds a row, renewed every lease/2; the timeouts left unset shrink with it",
		bind: func(f *relayFlags) any { return &f.lease }},
	{flag: "publish-timeout", field: "PublishTimeout", help: "bound of one publish",
		derived: ", or lease/3 when shorter", bind: func(f *relayFlags) any { return &f.publishTimeout }},
	{flag: "store-timeout", field: "StoreTimeout", help: "bound of every store call",
		derived: ", or lease/6 when shorter", bind: func(f *relayFlags) any { return &f.storeTimeout }},
	{flag: "drain-timeout", field: "DrainTimeout", help: "bound of the whole shutdown after SIGTERM",
		derived: ", or 2/3 of the lease when shorter", bind: func(f *relayFlags) any { return &f.drainTimeout }},
	{flag: "stats-interval", field: "StatsInterval", help: `how often the table's gauges are read; "off" disables`,
		words: []flagval.Word{flagval.Off}, bind: func(f *relayFlags) any { return &f.statsInterval }},
	{flag: "max-attempts", field: "Retry.MaxAttempts", help: `failed publishes before a message is dead; "off" retries for ever`,
		words: []flagval.Word{flagval.Off}, bind: func(f *relayFlags) any { return &f.maxAttempts }},
	{flag: "max-claims", field: "MaxClaims", help: "lapsed leases before a message is dead: it keeps crashing or hanging the relay",
		bind: func(f *relayFlags) any { return &f.maxClaims }},
	{flag: "breaker-threshold", field: "BreakerThreshold", help: `consecutive transient failures that open the circuit breaker; "off" disables it`,
		words: []flagval.Word{flagval.Off}, bind: func(f *relayFlags) any { return &f.breakerThreshold }},
	{flag: "ordering", field: "Ordering", help: "unordered, or per-key: rows of one ordering key published one at a time, in order",
		bind: func(f *relayFlags) any { return &f.ordering }},
	{flag: "fair", field: "Fairness", help: "unordered, or tenant: every claim shared round-robin among the tenants with due rows; needs PostgreSQL",
		bind: func(f *relayFlags) any { return &f.fair }},
	{flag: "max-in-flight-per-tenant", field: "MaxInFlightPerTenant", help: "rows of one tenant a dispatcher holds at once; needs --fair tenant",
		def: stated("no cap but --max-in-flight"), bind: func(f *relayFlags) any { return &f.maxPerTenant }},

	{flag: "published-retention", scope: maintainerSetting, field: "PublishedRetention", help: `delete published rows older than this; "forever" keeps them`,
		words: []flagval.Word{flagval.Forever}, bind: func(f *relayFlags) any { return &f.publishedRetention }},
	{flag: "dead-retention", scope: maintainerSetting, field: "DeadRetention", help: `delete dead rows older than this; "forever" keeps them`,
		words: []flagval.Word{flagval.Forever}, bind: func(f *relayFlags) any { return &f.deadRetention }},
	{flag: "maintenance-interval", scope: maintainerSetting, field: "Interval", help: "time between maintenance passes",
		bind: func(f *relayFlags) any { return &f.maintenanceInterval }},
}

func init() {
	for i := range relaySettings {
		if relaySettings[i].def == nil {
			relaySettings[i].def = defaultOf(relaySettings[i].scope, relaySettings[i].field)
		}
	}
}

// addSettingFlags declares the flags of relaySettings on fs.
func addSettingFlags(fs *pflag.FlagSet, f *relayFlags) {
	for _, s := range relaySettings {
		s.declare(fs, f)
	}
}

// settingValues names the values of the settings as the flags spell them,
// replaced before the fields (FairnessTenant holds Fairness).
var settingValues = []struct{ value, word string }{
	{"FairnessUnordered", "unordered"}, {"FairnessTenant", "tenant"}, {"Ordering PerKey", "Ordering per-key"},
	{"Unordered or PerKey", "unordered or per-key"},
	{"KeepForever", `"forever"`}, {"or Off", `or "off"`},
	{"(zero means the default)", "(zero or unset means the default)"},
}

// namedFlags rewrites the *outbox.ConfigErrors of err, all of scope, in the
// words of the flags: "--lease (1s) must be longer than --publish-timeout
// (10s)". The flag of each field, and of every other field its reason
// names, comes from relaySettings.
func namedFlags(scope settingScope, err error) error {
	var all []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		all = j.Unwrap()
	} else {
		all = []error{err}
	}
	// The fields of scope, longest first, so that replacing them in a text
	// never cuts one in two (MaxInFlightPerTenant holds MaxInFlight).
	var fields []relaySetting
	for _, s := range relaySettings {
		if s.scope == scope {
			fields = append(fields, s)
		}
	}
	slices.SortFunc(fields, func(a, b relaySetting) int { return len(b.field) - len(a.field) })
	out := make([]error, 0, len(all))
	for _, e := range all {
		var ce *outbox.ConfigError
		if !errors.As(e, &ce) {
			out = append(out, e)
			continue
		}
		text := ce.Field + " " + ce.Reason
		for _, sv := range settingValues {
			text = strings.ReplaceAll(text, sv.value, sv.word)
		}
		for _, s := range fields {
			text = strings.ReplaceAll(text, s.field, "--"+s.flag)
		}
		out = append(out, fmt.Errorf("%s: %w", text, outbox.ErrInvalidSettings))
	}
	return errors.Join(out...)
}
