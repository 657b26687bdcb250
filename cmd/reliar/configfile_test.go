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

// TestPurgeDeadRetentionZeroKeepsYoungDeadLetters runs the input of the
// data loss report: a file with dead-retention: 0 at its top level (for the
// relay, "0 keeps them"), then reliar purge --config. Nothing young is
// deleted, whatever the file or the flags say, unless --force is typed.
func TestPurgeDeadRetentionZeroKeepsYoungDeadLetters(t *testing.T) {
	t.Parallel()
	db := newPG(t)
	db.migrate(t)
	// Dead letters written by plain SQL: 1 second, 2 hours and 30 days old.
	if _, err := db.pool.Exec(t.Context(), `INSERT INTO `+db.table()+` (id, message_type, payload, dead_at, dead_reason)
		VALUES (gen_random_uuid(), 'dead_1s', '\x00', now() - interval '1 second', 'permanent'),
		       (gen_random_uuid(), 'dead_2h', '\x00', now() - interval '2 hours', 'permanent'),
		       (gen_random_uuid(), 'dead_30d', '\x00', now() - interval '30 days', 'permanent')`); err != nil {
		t.Fatal(err)
	}
	left := func() (young, twoHours, old int) {
		return db.count(t, "message_type = 'dead_1s'"), db.count(t, "message_type = 'dead_2h'"), db.count(t, "message_type = 'dead_30d'")
	}
	top := "database-url: " + postgresURL + "\nschema: " + db.schema + "\n"
	purge := func(yaml string, args ...string) run {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		return command(t, ctx, t.TempDir(), t.TempDir(), nil, binary, append([]string{"purge", "--config", writeConfig(t, yaml)}, args...)...)
	}
	steps := []struct {
		name           string
		yaml           string
		args           []string
		code           int
		young, h2, old int
	}{
		{"the report's input: a top-level key is refused", top + "dead-retention: 0\n", nil, 2, 1, 1, 1},
		{"zero in purge's section is the 14-day default", top + "purge:\n  dead-retention: 0\n", nil, 0, 1, 1, 0},
		{"under an hour is refused", top, []string{"--dead-retention", "30m"}, 2, 1, 1, 0},
		{"forever keeps everything", top, []string{"--dead-retention", "forever", "--published-retention", "forever"}, 0, 1, 1, 0},
		{"a negative retention is refused", top, []string{"--dead-retention", "-1s"}, 2, 1, 1, 0},
		{"--force from the file does not count", top + "purge:\n  force: true\n", []string{"--dead-retention", "30m"}, 2, 1, 1, 0},
		{"under an hour with --force", top, []string{"--dead-retention", "30m", "--force"}, 0, 1, 0, 0},
	}
	for _, s := range steps {
		r := purge(s.yaml, s.args...)
		young, h2, old := left()
		if r.code != s.code || young != s.young || h2 != s.h2 || old != s.old {
			t.Fatalf("%s: exit %d (want %d), dead letters left 1s=%d 2h=%d 30d=%d (want %d %d %d)\nstdout %q\nstderr %q",
				s.name, r.code, s.code, young, h2, old, s.young, s.h2, s.old, r.stdout, r.stderr)
		}
		if r.code == 2 && (r.stdout != "" || strings.Count(r.stderr, "\n") != 1) {
			t.Fatalf("%s: stdout %q, stderr %q; want nothing and one line", s.name, r.stdout, r.stderr)
		}
		t.Logf("%s: exit %d; %s", s.name, r.code, strings.TrimSpace(r.stderr+r.stdout))
	}
}
