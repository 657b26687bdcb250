package main

import (
	"context"
	"encoding/json"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestHostileURLPasswordsNeverPrinted gives the CLI database URLs whose
// password holds the characters that defeat a textual redactor: an
// unescaped #, /, ? or space, and a query password with a space. Whatever
// the command answers, no piece of the password reaches its output.
func TestHostileURLPasswordsNeverPrinted(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		url    string
		pieces []string
	}{
		{"hash", "postgres://app:pw1#hunter@127.0.0.1:1/db", []string{"pw1", "hunter"}},
		{"hash after a numeric port-like password", "postgres://app:1234#hunter@127.0.0.1:1/db", []string{"1234", "hunter"}},
		{"slash", "postgres://app:pw2/hunter@127.0.0.1:1/db", []string{"pw2", "hunter"}},
		{"question mark", "postgres://app:pw3?hunter@127.0.0.1:1/db", []string{"pw3", "hunter"}},
		{"space", "postgres://app:pw4 hunter@127.0.0.1:1/db", []string{"pw4", "hunter"}},
		{"query password with a space", "postgres://app@127.0.0.1:1/db?connect_timeout=2&password=pw5 hunter", []string{"pw5", "hunter"}},
		{"mysql hash", "mysql://root:pw6#hunter@127.0.0.1:1/test", []string{"pw6", "hunter"}},
	}
	for _, tt := range tests {
		for _, cmd := range [][]string{
			{"migrate", "--database-url", tt.url, "--timeout", "5s"},
			{"stats", "--database-url", tt.url, "--log-level", "debug"},
			{"stats", "--database-url", tt.url, "--log-level", "debug", "--log-format", "json"},
		} {
			t.Run(tt.name+"/"+strings.Join(cmd[:1], "")+"/"+cmd[len(cmd)-1], func(t *testing.T) {
				t.Parallel()
				ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
				defer cancel()
				r := command(t, ctx, t.TempDir(), t.TempDir(), nil, binary, cmd...)
				if r.code == 0 {
					t.Fatalf("exit 0 for an unreachable database; stderr %q", r.stderr)
				}
				for _, p := range tt.pieces {
					if strings.Contains(r.stderr+r.stdout, p) {
						t.Fatalf("output shows %q of the password:\nstdout %q\nstderr %q", p, r.stdout, r.stderr)
					}
				}
				if !strings.Contains(r.stderr, "xxxxx") {
					t.Errorf("stderr %q does not show the mask", r.stderr)
				}
			})
		}
	}
}

// TestJSONLogsParseWithSecretQuery runs the relay against a webhook whose
// URL carries a token in its query, logging JSON at debug: every line of
// stderr is one JSON object, and the token appears in none.
func TestJSONLogsParseWithSecretQuery(t *testing.T) {
	t.Parallel()
	db := newPG(t)
	db.migrate(t)
	db.insert(t, "order_placed", 3)
	const token = "t0kenValue42"
	p := startRelay(t, "--database-url", postgresURL, "--schema", db.schema,
		"--broker", "http://127.0.0.1:1/hook?x=1&token="+token,
		"--webhook-secret", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
		"--log-format", "json", "--log-level", "debug", "--idle-poll-interval", "100ms")
	waitFor(t, "a failed publish logged", func() bool {
		return strings.Contains(p.stderr.String(), "127.0.0.1:1") && db.count(t, "attempts > 0") > 0
	})
	if code, _ := p.stop(t, syscall.SIGTERM); code != 0 {
		t.Fatalf("exit %d, want 0", code)
	}
	out := p.stderr.String()
	if strings.Contains(out, token) {
		t.Errorf("stderr shows the token")
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	for i, l := range lines {
		var rec map[string]any
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatalf("line %d of %d is not JSON: %v\n%s", i+1, len(lines), err, l)
		}
		if _, ok := rec["msg"]; !ok {
			t.Fatalf("line %d has no msg: %s", i+1, l)
		}
	}
}
