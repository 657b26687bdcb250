package main

import (
	"context"
	"io"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServeRateLimitsWrongBearerTokens runs the built `reliar serve` and
// sends it 15 wrong bearer tokens from one address: at most 10 are answered
// 401, the rest 429 with a Retry-After of whole seconds, the right token is
// refused too while the address is blocked, and serve's log holds exactly
// one line for the burst, none for the requests the block refused, and
// never a token.
func TestServeRateLimitsWrongBearerTokens(t *testing.T) {
	t.Parallel()
	const (
		token      = "serve-guard-token-0123456789"
		wrongToken = "wrong-token-guess-000000"
		maxRefused = 10
		burstLine  = "too many failed logins or bearer tokens"
	)
	db := newPG(t)
	db.migrate(t)
	cmd := exec.Command(binary, "serve", "--database-url", postgresURL, "--schema", db.schema, "--addr", "127.0.0.1:0")
	cmd.Env = []string{"HOME=" + t.TempDir(), "RELIAR_TOKEN=" + token}
	var stderr syncBuffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		select {
		case <-done:
		default:
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("serve stderr:\n%s", stderr.String())
		}
	})
	var base string
	waitFor(t, "serve to listen", func() bool {
		if m := listening.FindStringSubmatch(stderr.String()); m != nil {
			base = m[1]
			return true
		}
		select {
		case err := <-done:
			done <- err
			t.Fatalf("serve exited: %v\n%s", err, stderr.String())
		default:
		}
		return false
	})

	client := &http.Client{Timeout: 10 * time.Second}
	stats := func(bearer string) *http.Response {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"api/stats", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+bearer)
		res, err := client.Do(req)
		if err != nil {
			t.Fatalf("GET /api/stats: %v", err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res
	}
	// The right token works before any failure.
	if res := stats(token); res.StatusCode != http.StatusOK {
		t.Fatalf("the right token: status %d, want 200", res.StatusCode)
	}

	var refused, limited int
	for i := range 15 {
		res := stats(wrongToken)
		switch res.StatusCode {
		case http.StatusUnauthorized:
			if limited > 0 {
				t.Fatalf("request %d: 401 after a 429; the block must hold", i+1)
			}
			refused++
		case http.StatusTooManyRequests:
			limited++
			secs, err := strconv.Atoi(res.Header.Get("Retry-After"))
			if err != nil || secs < 1 || secs > 60 {
				t.Fatalf("request %d: 429 with Retry-After %q, want whole seconds within a minute", i+1, res.Header.Get("Retry-After"))
			}
		default:
			t.Fatalf("request %d: status %d", i+1, res.StatusCode)
		}
	}
	if refused > maxRefused || limited == 0 {
		t.Fatalf("%d wrong tokens answered 401 and %d answered 429; want 429 after at most %d", refused, limited, maxRefused)
	}
	if res := stats(token); res.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("the right token during the block: status %d, want 429", res.StatusCode)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
		done <- nil
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop after SIGTERM")
	}
	log := stderr.String()
	if n := strings.Count(log, burstLine); n != 1 {
		t.Fatalf("the burst is logged %d times, want once:\n%s", n, log)
	}
	// Each refused token before the block has its line; the requests
	// refused by the block add none.
	if n := strings.Count(log, "admin bearer token refused"); n != refused {
		t.Errorf("%d lines for refused tokens, want one for each of the %d answered 401:\n%s", n, refused, log)
	}
	for _, secret := range []string{wrongToken, token} {
		if strings.Contains(log, secret) {
			t.Errorf("serve's log shows a bearer token %q:\n%s", secret, log)
		}
	}
}
