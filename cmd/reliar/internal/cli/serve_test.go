package cli

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// serveToken is the access token of the serve tests.
const serveToken = "serve-test-token-0123456789"

func TestServeBadInput(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"no token", nil, []string{"serve", "--database-url", postgresURL}, "--token is required (or RELIAR_TOKEN)"},
		{"empty token", map[string]string{"RELIAR_TOKEN": ""}, []string{"serve", "--database-url", postgresURL}, "--token is required"},
		{"short token", nil, []string{"serve", "--database-url", postgresURL, "--token", "short"}, "at least 16 characters, not 5"},
		{"token from the environment, bad URL", map[string]string{"RELIAR_TOKEN": serveToken}, []string{"serve", "--database-url", "nosuch://x"}, "unknown scheme"},
		{"no database", map[string]string{"RELIAR_TOKEN": serveToken}, []string{"serve"}, "--database-url is required"},
		{"bad address", map[string]string{"RELIAR_TOKEN": serveToken}, []string{"serve", "--database-url", postgresURL, "--addr", "8080"}, `for "--addr" flag`},
		{"bad port", map[string]string{"RELIAR_TOKEN": serveToken}, []string{"serve", "--database-url", postgresURL, "--addr", "127.0.0.1:70000"}, `for "--addr" flag`},
		{"negative sample interval", map[string]string{"RELIAR_TOKEN": serveToken}, []string{"serve", "--database-url", postgresURL, "--sample-interval", "-1s"}, "must not be negative"},
		{"long sample interval", map[string]string{"RELIAR_TOKEN": serveToken}, []string{"serve", "--database-url", postgresURL, "--sample-interval", "2h"}, "at most 1h"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, tt.env, tt.args...)
			if r.code != 2 || !strings.Contains(r.stderr, tt.want) || r.stdout != "" {
				t.Fatalf("code %d, stdout %q, stderr %q; want 2 with %q", r.code, r.stdout, r.stderr, tt.want)
			}
			if strings.Contains(r.stderr, serveToken) {
				t.Fatalf("stderr shows the token: %q", r.stderr)
			}
		})
	}
}

func TestServeNotMigrated(t *testing.T) {
	tg := newPostgresTarget(t, false)
	r := run(t, map[string]string{"RELIAR_TOKEN": serveToken}, tg.cmd("serve", "--addr", "127.0.0.1:0")...)
	if r.code != 1 || !strings.Contains(r.stderr, "reliar migrate") {
		t.Fatalf("code %d, stderr %q", r.code, r.stderr)
	}
}

// lockedBuffer is a bytes.Buffer safe for concurrent use.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

var listeningURL = regexp.MustCompile(`admin page listening"? url=(http://127\.0\.0\.1:\d+/)`)

// TestServe runs reliar serve on a migrated schema: it listens on loopback,
// logs at info by default, answers the API with the token from
// RELIAR_TOKEN, refuses cross-site writes, and exits 0 on cancellation.
func TestServe(t *testing.T) {
	tg := newPostgresTarget(t, true)
	seed(t, tg, seedRow{typ: "a", fate: fateDead}, seedRow{typ: "b", fate: fateDue})

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr lockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, tg.cmd("serve", "--addr", "127.0.0.1:0", "--sample-interval", "1s"), Env{
			Stdout: &stdout,
			Stderr: &stderr,
			Getenv: func(k string) (string, bool) {
				if k == "RELIAR_TOKEN" {
					return serveToken, true
				}
				return "", false
			},
		})
	}()
	var base string
	for deadline := time.Now().Add(30 * time.Second); base == ""; {
		if m := listeningURL.FindStringSubmatch(stderr.String()); m != nil {
			base = m[1]
			break
		}
		select {
		case code := <-done:
			t.Fatalf("serve exited %d: %s", code, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve does not listen: %s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}

	get := func(path, token string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, base+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if code, body := get("api/stats", serveToken); code != http.StatusOK || !strings.Contains(body, `"dead":1`) || !strings.Contains(body, `"due":1`) {
		t.Fatalf("/api/stats: %d %s", code, body)
	}
	if code, _ := get("api/stats", ""); code != http.StatusUnauthorized {
		t.Fatalf("/api/stats without the token: %d", code)
	}
	req, _ := http.NewRequest(http.MethodPost, base+"api/dead/purge", strings.NewReader(`{"all_matching":true}`))
	req.Header.Set("Authorization", "Bearer "+serveToken)
	req.Header.Set("Origin", "https://evil.example")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusForbidden {
		t.Fatalf("cross-site purge: %d", res.StatusCode)
	}
	if st := statsOf(t, tg); st["dead"] != 1 {
		t.Fatalf("dead %v after a refused purge", st["dead"])
	}

	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("serve exited %d: %s", code, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve does not stop on cancellation")
	}
	if !strings.Contains(stderr.String(), "admin page shutting down") || strings.Contains(stderr.String(), serveToken) {
		t.Fatalf("stderr %q", stderr.String())
	}
	if stdout.String() != "" {
		t.Fatalf("stdout %q", stdout.String())
	}
}
