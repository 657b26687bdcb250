package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/reliar/reliar/cmd/reliar/internal/relay"
	"github.com/reliar/reliar/outbox"
)

// relayConfig parses relay flags from args and returns the configuration;
// app.Log() stands for the logger that --log-level made.
func relayConfig(t *testing.T, args ...string) (relay.Config, error) {
	t.Helper()
	cfg, _, err := relayConfigApp(t, args...)
	return cfg, err
}

func relayConfigApp(t *testing.T, args ...string) (relay.Config, *App, error) {
	t.Helper()
	app := &App{stderr: io.Discard, log: slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	root := &cobra.Command{Use: "reliar"}
	root.PersistentFlags().StringVar(&app.logLevel, "log-level", "warn", "")
	root.PersistentFlags().StringVar(&app.logFormat, "log-format", "text", "")
	var f relayFlags
	cmd := &cobra.Command{Use: "relay", RunE: func(*cobra.Command, []string) error { return nil }}
	addRelayFlags(cmd, &f)
	root.AddCommand(cmd)
	root.SetArgs(append([]string{"relay"}, args...))
	if err := root.Execute(); err != nil {
		t.Fatalf("parse %q: %v", args, err)
	}
	cfg, err := f.config(app, cmd.Flags())
	return cfg, app, err
}

func TestRelayConfigFromFlags(t *testing.T) {
	cfg, err := relayConfig(t, "--database-url", postgresURL, "--schema", "billing", "--broker", "kafka://127.0.0.1:9092",
		"--topic", "invoices", "--dispatchers", "3", "--batch-size", "7", "--max-in-flight", "9", "--poll-interval", "10ms",
		"--idle-poll-interval", "20ms", "--lease", "40s", "--publish-timeout", "5s", "--store-timeout", "3s",
		"--drain-timeout", "15s", "--max-attempts", "4", "--max-claims", "2", "--breaker-threshold", "off",
		"--stats-interval", "off", "--ordering", "per-key", "--no-listen", "--async-commit", "--migrate", "--published-retention", "forever",
		"--dead-retention", "48h", "--maintenance-interval", "5s", "--events-file", "ev.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.Settings
	want := outbox.Settings{BatchSize: 7, MaxInFlight: 9, PollInterval: 10 * time.Millisecond, IdlePollInterval: 20 * time.Millisecond,
		Lease: 40 * time.Second, PublishTimeout: 5 * time.Second, StoreTimeout: 3 * time.Second, DrainTimeout: 15 * time.Second,
		StatsInterval: outbox.Off, MaxClaims: 2, BreakerThreshold: outbox.Off, Ordering: outbox.PerKey}
	s.WorkerID, s.Retry = "", nil
	if s != want {
		t.Errorf("settings %+v, want %+v", s, want)
	}
	if b, ok := cfg.Settings.Retry.(outbox.ExponentialBackoff); !ok || b.MaxAttempts != 4 {
		t.Errorf("retry %+v, want MaxAttempts 4", cfg.Settings.Retry)
	}
	m := cfg.Maintainer
	if m == nil || m.PublishedRetention != outbox.KeepForever || m.DeadRetention != 48*time.Hour || m.Interval != 5*time.Second {
		t.Errorf("maintainer %+v, want published kept, dead 48h, every 5s", m)
	}
	if cfg.Dispatchers != 3 || !cfg.NoWakeups || !cfg.StoreOptions.AsyncCommit || !cfg.Migrate || cfg.EventsFile != "ev.jsonl" || cfg.Broker.Kind() != "kafka" ||
		cfg.StoreOptions.Schema != "billing" || cfg.MetricsAddr != relay.DefaultMetricsAddr {
		t.Errorf("config %+v", cfg)
	}
	if !cfg.Logger.Enabled(context.Background(), slog.LevelInfo) {
		t.Error("the relay logs at info by default")
	}
}

func TestRelayConfigDefaults(t *testing.T) {
	cfg, app, err := relayConfigApp(t, "--database-url", postgresURL, "--broker", natsURL, "--log-level", "error", "--no-maintainer")
	if err != nil {
		t.Fatal(err)
	}
	// Unset flags stay zero: the dispatcher takes its defaults.
	if s := cfg.Settings; s != (outbox.Settings{}) || cfg.Dispatchers != 0 {
		t.Errorf("settings %+v, dispatchers %d; want zero values", s, cfg.Dispatchers)
	}
	if cfg.Maintainer != nil || cfg.NoWakeups || cfg.StoreOptions.AsyncCommit || cfg.Migrate {
		t.Errorf("config %+v", cfg)
	}
	if cfg.Logger != app.Log() {
		t.Error("with --log-level, the relay does not use the level asked for")
	}
}

func TestRelayBadFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no broker", []string{"--database-url", postgresURL}, "--broker is required"},
		{"no database", []string{"--broker", natsURL}, "--database-url is required"},
		{"bad broker", []string{"--database-url", postgresURL, "--broker", "nats://"}, "bad broker URL"},
		{"max attempts", []string{"--database-url", postgresURL, "--broker", natsURL, "--max-attempts", "-5"}, "--max-attempts"},
		{"store timeout", []string{"--database-url", postgresURL, "--broker", natsURL, "--lease", "30s", "--store-timeout", "20s"}, "--store-timeout"},
		{"ordering", []string{"--database-url", postgresURL, "--broker", natsURL, "--ordering", "fifo"}, "--ordering"},
		{"dispatchers", []string{"--database-url", postgresURL, "--broker", natsURL, "--dispatchers", "-2"}, "--dispatchers"},
		{"dead retention", []string{"--database-url", postgresURL, "--broker", natsURL, "--dead-retention", "-1s"}, "--dead-retention"},
		{"maintenance interval", []string{"--database-url", postgresURL, "--broker", natsURL, "--maintenance-interval", "-1m"}, "--maintenance-interval"},
		{"too many dispatchers", []string{"--database-url", postgresURL, "--broker", natsURL, "--dispatchers", "1000"}, "--dispatchers"},
		{"dispatchers beyond the pool", []string{"--database-url", postgresURL, "--broker", natsURL, "--dispatchers", "8"}, "--pool-size"},
		{"metrics port", []string{"--database-url", postgresURL, "--broker", natsURL, "--metrics-addr", "0.0.0.0:99999"}, "--metrics-addr"},
		{"subject prefix", []string{"--database-url", postgresURL, "--broker", natsURL, "--subject-prefix", "a b.>"}, "--subject-prefix"},
		{"log format", []string{"--database-url", postgresURL, "--broker", natsURL, "--log-format", "xml"}, "log format"},
		{"fair", []string{"--database-url", postgresURL, "--broker", natsURL, "--fair", "fifo"}, `--fair "fifo": want unordered or tenant`},
		{"per-tenant cap", []string{"--database-url", postgresURL, "--broker", natsURL, "--fair", "tenant", "--max-in-flight-per-tenant", "-3"}, "--max-in-flight-per-tenant"},
		{"per-tenant cap word", []string{"--database-url", postgresURL, "--broker", natsURL, "--fair", "tenant", "--max-in-flight-per-tenant", "many"}, "--max-in-flight-per-tenant"},
		{"per-tenant cap without fair", []string{"--database-url", postgresURL, "--broker", natsURL, "--max-in-flight-per-tenant", "5"}, "--max-in-flight-per-tenant needs --fair tenant"},
		{"per-tenant cap with fair unordered", []string{"--database-url", postgresURL, "--broker", natsURL, "--fair", "unordered", "--max-in-flight-per-tenant", "5"}, "--max-in-flight-per-tenant needs --fair tenant"},
		{"fair and per-key", []string{"--database-url", postgresURL, "--broker", natsURL, "--fair", "tenant", "--ordering", "per-key"}, "--fair tenant cannot be combined with --ordering per-key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, nil, append([]string{"relay"}, tt.args...)...)
			if r.code != 2 || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, tt.want) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want 2, nothing, one line with %q", r.code, r.stdout, r.stderr, tt.want)
			}
		})
	}
}

// TestRelayFromEnvironment: the broker and its options come from RELIAR_*
// variables, a secret included.
func TestRelayFromEnvironment(t *testing.T) {
	r := run(t, map[string]string{
		"RELIAR_DATABASE_URL":   postgresURL,
		"RELIAR_BROKER":         "https://hooks.example.com/x",
		"RELIAR_WEBHOOK_SECRET": "not base64!",
	}, "relay")
	if r.code != 2 || !strings.Contains(r.stderr, "secret") || strings.Contains(r.stderr, "base64!") {
		t.Fatalf("exit %d, stderr %q; want 2 about the secret, without it", r.code, r.stderr)
	}
}

// TestRelayFairFlags: --fair and --max-in-flight-per-tenant reach the
// dispatchers' settings from the command line, the environment and the
// relay section of the file.
func TestRelayFairFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		fair outbox.Fairness
		cap  int
	}{
		{"default", nil, outbox.FairnessUnordered, 0},
		{"unordered", []string{"--fair", "unordered"}, outbox.FairnessUnordered, 0},
		{"tenant", []string{"--fair", "tenant"}, outbox.FairnessTenant, 0},
		{"tenant in capitals", []string{"--fair", "Tenant"}, outbox.FairnessTenant, 0},
		{"tenant with a cap", []string{"--fair", "tenant", "--max-in-flight-per-tenant", "50"}, outbox.FairnessTenant, 50},
		{"zero cap is no cap", []string{"--fair", "tenant", "--max-in-flight-per-tenant", "0"}, outbox.FairnessTenant, 0},
		{"zero cap without fair", []string{"--max-in-flight-per-tenant", "0"}, outbox.FairnessUnordered, 0},
		{"empty is the default", []string{"--fair", ""}, outbox.FairnessUnordered, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := relayConfig(t, append([]string{"--database-url", postgresURL, "--broker", natsURL}, tt.args...)...)
			if err != nil {
				t.Fatal(err)
			}
			if s := cfg.Settings; s.Fairness != tt.fair || s.MaxInFlightPerTenant != tt.cap {
				t.Fatalf("Fairness %v, MaxInFlightPerTenant %d; want %v, %d", s.Fairness, s.MaxInFlightPerTenant, tt.fair, tt.cap)
			}
		})
	}
}

// TestRelayFairConfigFile: the relay section's fair and
// max-in-flight-per-tenant keys are read, a bad value exits 2 before
// anything connects naming the flag, and the keys are refused at the top
// level.
func TestRelayFairConfigFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, yaml string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	// A database that answers nothing: connecting would take the connect
	// timeout.
	const db = "database-url: postgres://u@192.0.2.1:5432/db?connect_timeout=30\n"
	tests := []struct {
		name, yaml string
		env        map[string]string
		want       []string
	}{
		{"bad fair", "relay:\n  fair: fifo\n", nil, []string{`--fair "fifo": want unordered or tenant`}},
		{"bad cap", "relay:\n  fair: tenant\n  max-in-flight-per-tenant: -1\n", nil, []string{"max-in-flight-per-tenant", "must not be negative"}},
		{"cap without fair", "relay:\n  max-in-flight-per-tenant: 4\n", nil, []string{"--max-in-flight-per-tenant needs --fair tenant"}},
		{"cap from the file, fair from the environment", "relay:\n  max-in-flight-per-tenant: 4\n", map[string]string{"RELIAR_FAIR": "tenant", "RELIAR_ORDERING": "per-key"},
			[]string{"--fair tenant cannot be combined with --ordering per-key"}},
		{"fair at the top level", "fair: tenant\n", nil, []string{`"fair"`, "relay.fair"}},
		{"misspelt key", "relay:\n  fairness: tenant\n", nil, []string{`"relay.fairness"`, `"relay.fair"`}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := write(fmt.Sprintf("c%d.yaml", i), db+tt.yaml)
			start := time.Now()
			r := run(t, tt.env, "relay", "--broker", natsURL, "--config", path)
			if r.code != 2 || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 {
				t.Fatalf("exit %d, stdout %q, stderr %q; want 2, nothing, one line", r.code, r.stdout, r.stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr %q does not say %s", r.stderr, w)
				}
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %v: it connected before refusing", d)
			}
		})
	}
}

// TestRelayFairOnSQLite: a relay asked for fair claims over SQLite, which
// cannot make them, exits 2 once the store is open, saying so; the start-up
// line shows the settings, taken here from the relay section of a file.
func TestRelayFairOnSQLite(t *testing.T) {
	t.Parallel()
	tg := newSQLiteTarget(t)
	path := filepath.Join(t.TempDir(), "reliar.yaml")
	yaml := "database-url: " + tg.url + "\nrelay:\n  fair: tenant\n  max-in-flight-per-tenant: 5\n  metrics-addr: 127.0.0.1:0\n  no-maintainer: true\n"
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	r := run(t, nil, "relay", "--broker", natsURL, "--config", path)
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	last := lines[len(lines)-1]
	if r.code != 2 || r.stdout != "" || !strings.HasPrefix(last, "reliar: ") ||
		!strings.Contains(last, "cannot claim fairly") || !strings.Contains(last, "--fair tenant") || !strings.Contains(last, "sqlite") {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 2, nothing, a last line saying SQLite cannot claim fairly", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "fair=tenant max_in_flight_per_tenant=5") {
		t.Errorf("the start-up line does not show the fairness settings:\n%s", r.stderr)
	}
}

// TestRelayAsyncCommitOnMariaDB: the MariaDB store has no asynchronous
// commit, so a relay asked for one, by flag or by environment, exits 2
// saying so instead of starting without it.
func TestRelayAsyncCommitOnMariaDB(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		env  map[string]string
		args []string
	}{
		{"flag", nil, []string{"--async-commit"}},
		{"environment", map[string]string{"RELIAR_ASYNC_COMMIT": "true"}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"relay", "--database-url", "mysql://root@127.0.0.1:3306/test", "--broker", natsURL,
				"--metrics-addr", "127.0.0.1:0", "--no-maintainer"}, tt.args...)
			r := run(t, tt.env, args...)
			lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
			if last := lines[len(lines)-1]; r.code != 2 || r.stdout != "" || !strings.Contains(last, "drop --async-commit") {
				t.Fatalf("exit %d, stdout %q, stderr %q; want 2, nothing, a last line saying to drop --async-commit", r.code, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stderr, "async_commit=true") {
				t.Errorf("the start-up line does not show async_commit=true:\n%s", r.stderr)
			}
		})
	}
}
