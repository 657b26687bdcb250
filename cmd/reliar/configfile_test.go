package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeConfig writes a YAML configuration file for one test.
func writeConfig(t *testing.T, yaml string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "reliar.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestConfigFileUnknownOrMisplacedKey: a misspelt key, a scalar where a
// command's section belongs, or a command's key at the top level stops the
// command with exit status 2 before it connects anywhere, naming the key
// and the closest valid one.
func TestConfigFileUnknownOrMisplacedKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, yaml string
		args       []string
		want       []string
	}{
		{"misspelt key", "dispatchrs: 3\n", []string{"relay", "--broker", natsURL}, []string{`"dispatchrs"`, `"relay.dispatchers"`}},
		{"misspelt key in its section", "relay:\n  dispatchrs: 3\n", []string{"relay", "--broker", natsURL}, []string{`"relay.dispatchrs"`, `"relay.dispatchers"`}},
		{"scalar for a section", "relay: 5\n", []string{"relay", "--broker", natsURL}, []string{`"relay"`, "mapping"}},
		{"command key at the top", "dead-retention: 0\n", []string{"purge"}, []string{`"dead-retention"`, "purge.dead-retention", "relay.dead-retention"}},
		{"key of another command", "stats:\n  dispatchers: 2\n", []string{"stats"}, []string{`"stats.dispatchers"`, "relay.dispatchers"}},
		{"for a command that does not read it", "relay:\n  dispatchrs: 3\n", []string{"stats"}, []string{`"relay.dispatchrs"`, `"relay.dispatchers"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// A database that answers nothing: a connection attempt would
			// hang for the connect timeout, far beyond this test's patience.
			cfg := writeConfig(t, "database-url: postgres://u@192.0.2.1:5432/db?connect_timeout=30\n"+tt.yaml)
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			start := time.Now()
			r := command(t, ctx, t.TempDir(), t.TempDir(), nil, binary, append(tt.args, "--config", cfg)...)
			if r.code != 2 || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 {
				t.Fatalf("exit %d, stdout %q, stderr %q; want 2, nothing, one line", r.code, r.stdout, r.stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr %q does not name %s", r.stderr, w)
				}
			}
			if d := time.Since(start); d > 15*time.Second {
				t.Errorf("took %v: it connected before refusing", d)
			}
		})
	}
}
