package cli

import (
	"context"
	"io"
	"log/slog"
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
		"--stats-interval", "off", "--ordering", "per-key", "--no-listen", "--migrate", "--published-retention", "forever",
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
	if cfg.Dispatchers != 3 || !cfg.NoWakeups || !cfg.Migrate || cfg.EventsFile != "ev.jsonl" || cfg.Broker.Kind() != "kafka" ||
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
	if cfg.Maintainer != nil || cfg.NoWakeups || cfg.Migrate {
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
