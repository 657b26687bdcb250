package cli

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/spf13/cobra"
	"go.uber.org/goleak"

	"github.com/reliar/reliar/cmd/reliar/internal/exitcode"
)

// Real services the tests use; they fail when a service is missing.
const (
	postgresURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	natsURL     = "nats://127.0.0.1:4222"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// result is what one in-process run of the CLI produced.
type result struct {
	code           int
	stdout, stderr string
}

// run runs the CLI in-process with args and the environment env.
func run(t *testing.T, env map[string]string, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	code := Run(ctx, args, Env{
		Stdout: &stdout,
		Stderr: &stderr,
		Getenv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
	})
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// lastLine returns the last line of out and fails if anything follows it.
func lastLine(t *testing.T, out string) string {
	t.Helper()
	if !strings.HasSuffix(out, "\n") {
		t.Fatalf("stdout %q does not end with a newline", out)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	return lines[len(lines)-1]
}

func randomName(prefix string) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

func TestEveryCommandHasAnExample(t *testing.T) {
	app := &App{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Example == "" {
			t.Errorf("%q has no example in its --help", c.CommandPath())
		}
		if c.Short == "" {
			t.Errorf("%q has no short description", c.CommandPath())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(app.rootCommand())
}

func TestHelp(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{nil, "Available Commands"},
		{[]string{"--help"}, "Available Commands"},
		{[]string{"demo", "--help"}, "reliar demo --database-url"},
		{[]string{"migrate", "--help"}, "--print-sql"},
		{[]string{"help", "migrate"}, "reliar migrate --database-url"},
		{[]string{"version", "-h"}, "reliar version --json"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			r := run(t, nil, tt.args...)
			if r.code != 0 || !strings.Contains(r.stdout, tt.want) || r.stderr != "" {
				t.Fatalf("code %d, stdout %q, stderr %q; want %q on stdout", r.code, r.stdout, r.stderr, tt.want)
			}
		})
	}
}

func TestVersion(t *testing.T) {
	r := run(t, nil, "version")
	if r.code != 0 || !regexp.MustCompile(`^reliar \S+ go1\.\S+ \w+/\w+( \(\w+\))?\n$`).MatchString(r.stdout) {
		t.Fatalf("version: code %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	r = run(t, nil, "version", "--json")
	var v versionInfo
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil || r.code != 0 || !strings.HasPrefix(v.Go, "go") || v.Version == "" {
		t.Fatalf("version --json: code %d, %q: %v", r.code, r.stdout, err)
	}
}

// TestBadInput checks that every kind of bad input exits 2 with one line
// on stderr, nothing on stdout, and no secret shown.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	badYAML := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(badYAML, []byte("demo: [unclosed\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"unknown command", nil, []string{"frobnicate"}, `unknown command "frobnicate"`},
		{"unknown flag", nil, []string{"demo", "--bogus"}, "unknown flag: --bogus"},
		{"malformed flag value", nil, []string{"demo", "--messages", "many"}, `invalid argument "many"`},
		{"negative messages", nil, []string{"demo", "--messages", "-1"}, `for "--messages" flag`},
		{"negative producers", nil, []string{"demo", "--producers", "-2"}, `for "--producers" flag`},
		{"negative timeout", nil, []string{"demo", "--timeout", "-1s"}, "must not be negative"},
		{"positional argument", nil, []string{"version", "extra"}, `unknown command "extra"`},
		{"missing database URL", nil, []string{"migrate"}, "--database-url is required"},
		{"unknown scheme", nil, []string{"migrate", "--database-url", "oracle://scott:tiger@db/x"}, `unknown scheme "oracle"`},
		{"malformed URL", nil, []string{"migrate", "--database-url", "postgres://app:tiger@db:port/x"}, "invalid port"},
		{"demo bad URL", nil, []string{"demo", "--database-url", "oracle://scott:tiger@db/x"}, `unknown scheme "oracle"`},
		{"schema on sqlite", nil, []string{"migrate", "--database-url", "sqlite://" + filepath.Join(dir, "x.db"), "--schema", "s"}, "SQLite has no schemas"},
		{"bad schema", nil, []string{"migrate", "--database-url", "postgres://db/x", "--schema", "a;b", "--print-sql"}, "invalid schema name"},
		{"bad env value", map[string]string{"RELIAR_MESSAGES": "lots"}, []string{"demo"}, "RELIAR_MESSAGES"},
		{"bad env URL", map[string]string{"RELIAR_DATABASE_URL": "oracle://scott:tiger@db/x"}, []string{"migrate"}, `unknown scheme "oracle"`},
		{"bad log level", nil, []string{"version", "--log-level", "loud"}, `unknown log level "loud"`},
		{"bad log format", nil, []string{"version", "--log-format", "xml"}, `unknown log format "xml"`},
		{"missing config file", nil, []string{"version", "--config", filepath.Join(dir, "none.yaml")}, "config file"},
		{"config file from env", map[string]string{"RELIAR_CONFIG": badYAML}, []string{"version"}, "config file"},
		{"unknown help topic", nil, []string{"help", "nothing"}, `unknown help topic "nothing"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, tt.env, tt.args...)
			if r.code != exitcode.Usage {
				t.Fatalf("exit %d, want 2; stderr %q", r.code, r.stderr)
			}
			if r.stdout != "" {
				t.Fatalf("stdout %q, want nothing", r.stdout)
			}
			if strings.Count(r.stderr, "\n") != 1 || !strings.HasPrefix(r.stderr, "reliar: ") {
				t.Fatalf("stderr %q, want one line starting with \"reliar: \"", r.stderr)
			}
			if !strings.Contains(r.stderr, tt.want) {
				t.Fatalf("stderr %q lacks %q", r.stderr, tt.want)
			}
			if strings.Contains(r.stderr, "tiger") {
				t.Fatalf("stderr shows the password: %q", r.stderr)
			}
		})
	}
}

func TestMigrateUnreachableDatabase(t *testing.T) {
	tests := []struct {
		name string
		url  string
	}{
		{"postgres", "postgres://app:tiger@127.0.0.1:1/x?connect_timeout=2"},
		{"mysql", "mysql://app:tiger@127.0.0.1:1/x?timeout=2s"},
		{"sqlite in a missing folder", "sqlite:///nonexistent-reliar-folder/x.db"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, nil, "migrate", "--database-url", tt.url)
			if r.code != exitcode.Failure || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 {
				t.Fatalf("code %d, stdout %q, stderr %q; want 1, nothing, one line", r.code, r.stdout, r.stderr)
			}
			if strings.Contains(r.stderr, "tiger") {
				t.Fatalf("stderr shows the password: %q", r.stderr)
			}
		})
	}
}

var migrateLine = regexp.MustCompile(`^migrate: (postgres|sqlite|mysql) .+ at version (\d+) \(was (\d+)\)$`)

func TestMigrate(t *testing.T) {
	schema := randomName("reliar_cli_")
	t.Cleanup(func() { dropSchema(t, schema) })
	tests := []struct {
		name string
		args []string
	}{
		{"sqlite", []string{"--database-url", "sqlite://" + filepath.Join(t.TempDir(), "app.db")}},
		{"postgres", []string{"--database-url", postgresURL, "--schema", schema}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"migrate"}, tt.args...)
			// The first run migrates from nothing, the second finds
			// nothing left to do.
			version := ""
			for i, wantWas := range []string{"0", ""} {
				r := run(t, nil, args...)
				if r.code != 0 || r.stderr != "" {
					t.Fatalf("run %d: code %d, stderr %q", i+1, r.code, r.stderr)
				}
				m := migrateLine.FindStringSubmatch(lastLine(t, r.stdout))
				if wantWas == "" {
					wantWas = version
				}
				if m == nil || m[2] == "0" || m[3] != wantWas {
					t.Fatalf("run %d: stdout %q, want a version above 0 (was %s)", i+1, r.stdout, wantWas)
				}
				version = m[2]
			}
			r := run(t, nil, append(args, "--json")...)
			var doc struct {
				Store   string `json:"store"`
				From    int    `json:"from"`
				To      int    `json:"to"`
				Applied int    `json:"applied"`
			}
			if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || r.code != 0 || doc.To < 1 || doc.From != doc.To || doc.Applied != 0 {
				t.Fatalf("--json: code %d, %q: %v", r.code, r.stdout, err)
			}
		})
	}
}

// dropSchema removes a schema a test created in PostgreSQL.
func dropSchema(t *testing.T, schema string) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, postgresURL)
	if err != nil {
		t.Errorf("drop schema %s: %v", schema, err)
		return
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
		t.Errorf("drop schema %s: %v", schema, err)
	}
}

func TestMigratePrintSQL(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"postgres default schema", []string{"--database-url", "postgres://db/x"}, []string{"-- 0001_outbox.up.sql", `"public".outbox`}},
		{"postgres schema", []string{"--database-url", "postgres://db/x", "--schema", "billing"}, []string{`CREATE SCHEMA IF NOT EXISTS "billing"`, `"billing".outbox`}},
		{"sqlite", []string{"--database-url", "sqlite://x.db"}, []string{"-- 0001_outbox.up.sql", "CREATE TABLE outbox"}},
		{"mysql", []string{"--database-url", "mysql://root@db/x"}, []string{"-- 0001_outbox.up.sql"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, nil, append([]string{"migrate", "--print-sql"}, tt.args...)...)
			if r.code != 0 || r.stderr != "" {
				t.Fatalf("code %d, stderr %q", r.code, r.stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(r.stdout, w) {
					t.Fatalf("SQL lacks %q", w)
				}
			}
			r = run(t, nil, append([]string{"migrate", "--print-sql", "--json"}, tt.args...)...)
			var doc struct {
				Files []struct{ Name, SQL string }
			}
			if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || len(doc.Files) == 0 {
				t.Fatalf("--json: %q: %v", r.stdout, err)
			}
		})
	}
}

// TestConfigPrecedence checks flags > environment > file through a real
// command: the schema printed by migrate --print-sql comes from the source
// that wins.
func TestConfigPrecedence(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "reliar.yaml")
	if err := os.WriteFile(file, []byte(`database-url: postgres://db/x
schema: from_top
migrate:
  schema: from_section
  print-sql: true
`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"file section", nil, []string{"--config", file}, "from_section"},
		{"env over file", map[string]string{"RELIAR_SCHEMA": "from_env"}, []string{"--config", file}, "from_env"},
		{"flag over env", map[string]string{"RELIAR_SCHEMA": "from_env"}, []string{"--config", file, "--schema", "from_flag"}, "from_flag"},
		{"config path from env", map[string]string{"RELIAR_CONFIG": file}, nil, "from_section"},
		{"env alone", map[string]string{"RELIAR_DATABASE_URL": "postgres://db/x", "RELIAR_SCHEMA": "only_env", "RELIAR_PRINT_SQL": "true"}, nil, "only_env"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, tt.env, append([]string{"migrate"}, tt.args...)...)
			if r.code != 0 {
				t.Fatalf("code %d, stderr %q", r.code, r.stderr)
			}
			if !strings.Contains(r.stdout, `"`+tt.want+`".outbox`) {
				t.Fatalf("SQL is not for schema %q:\n%s", tt.want, r.stdout[:min(len(r.stdout), 400)])
			}
		})
	}
}

var demoLine = regexp.MustCompile(`^demo: committed=(\d+) rolled_back=(\d+) published=(\d+) delivered=(\d+) lost=(\d+) duplicates=(\d+) throughput=\d+/s p50=[\d.]+ms p99=[\d.]+ms$`)

func TestDemo(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"sqlite and embedded NATS", nil},
		{"postgres and NATS server", []string{"--database-url", postgresURL, "--nats-url", natsURL}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, nil, append([]string{"demo", "--messages", "200"}, tt.args...)...)
			if r.code != 0 {
				t.Fatalf("code %d, stderr %q", r.code, r.stderr)
			}
			checkDemoStderr(t, r.stderr)
			m := demoLine.FindStringSubmatch(lastLine(t, r.stdout))
			if m == nil {
				t.Fatalf("last line of %q does not match %v", r.stdout, demoLine)
			}
			if m[1] != "200" || m[2] != "22" || m[4] != "200" || m[5] != "0" {
				t.Fatalf("summary %q", m[0])
			}
		})
	}
}

// demoTransient are the dispatcher's log messages for a store call that was
// slow: on a machine whose disk or cores are saturated by other work (the
// race detector makes the pure-Go SQLite many times slower), a claim or an
// outcome write can outlast StoreTimeout. The demo recovers from them, so
// they are not failures; anything else on stderr is.
var demoTransient = []string{
	`msg="claim failed; backing off"`,
	`msg="outcome write failed; will retry"`,
	`msg="lease renewal failed"`,
	`msg="a call ignored its context past its deadline`,
	`msg="releasing the rows of a claim that returned after it was given up"`,
}

// checkDemoStderr fails unless every line of stderr is a transient
// condition of the store, which it logs.
func checkDemoStderr(t *testing.T, stderr string) {
	t.Helper()
	for _, line := range strings.Split(strings.TrimSuffix(stderr, "\n"), "\n") {
		if line == "" {
			continue
		}
		transient := false
		for _, m := range demoTransient {
			if strings.Contains(line, m) && strings.Contains(line, "component=reliar.outbox.dispatcher") {
				transient = true
			}
		}
		if !transient {
			t.Fatalf("stderr line %q; all of stderr:\n%s", line, stderr)
		}
		t.Logf("transient (a slow store call on a loaded machine): %s", line)
	}
}

func TestDemoJSON(t *testing.T) {
	r := run(t, nil, "demo", "--messages", "50", "--json", "--log-level", "error")
	var doc struct {
		OK        bool `json:"ok"`
		Committed int  `json:"committed"`
		Lost      int  `json:"lost"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || r.code != 0 {
		t.Fatalf("code %d, stdout %q, stderr %q: %v", r.code, r.stdout, r.stderr, err)
	}
	if !doc.OK || doc.Committed != 50 || doc.Lost != 0 {
		t.Fatalf("document %+v", doc)
	}
}

func TestDemoDebugLogsGoToStderr(t *testing.T) {
	r := run(t, map[string]string{"RELIAR_LOG_LEVEL": "debug"}, "demo", "--messages", "20")
	if r.code != 0 {
		t.Fatalf("code %d, stderr %q", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "level=DEBUG") || !strings.Contains(r.stderr, "from=env") {
		t.Fatalf("stderr lacks debug logs: %q", r.stderr[:min(len(r.stderr), 500)])
	}
	if !demoLine.MatchString(lastLine(t, r.stdout)) || strings.Contains(r.stdout, "level=") {
		t.Fatalf("stdout %q", r.stdout)
	}
}

// TestDemoLostMessagesExit1 stops waiting for deliveries at once, so the
// messages still in flight count as lost: the summary says so, nothing
// follows it on stdout, and the exit status is 1.
func TestDemoLostMessagesExit1(t *testing.T) {
	r := run(t, nil, "demo", "--messages", "1000", "--timeout", "1ns")
	if r.code != exitcode.Failure {
		t.Fatalf("code %d, stdout %q, stderr %q; want 1", r.code, r.stdout, r.stderr)
	}
	m := demoLine.FindStringSubmatch(lastLine(t, r.stdout))
	if m == nil || m[5] == "0" {
		t.Fatalf("last line of %q: want lost > 0", r.stdout)
	}
	if !strings.HasPrefix(r.stderr, "reliar: demo: ") || !strings.Contains(r.stderr, "committed messages lost") || strings.Count(r.stderr, "\n") != 1 {
		t.Fatalf("stderr %q, want one line about the lost messages", r.stderr)
	}
}
