//go:build chaos

package chaos_test

import (
	"bytes"
	"context"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reliar/reliar/chaos/internal/rig"
)

// relayBinary builds `reliar relay` itself: these tests are about the
// relay's own surface, so the stand-in does not count and a relay that
// does not build fails them.
func relayBinary(t *testing.T) rig.Binary {
	t.Helper()
	b, err := rig.BuildRelay(ctxFor(t, 5*time.Minute), t.TempDir(), rig.KindRelay, false)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRelayRedactsSecretsInURLs runs the relay at debug level with
// passwords in its database and broker URLs (the broker unreachable, so
// its errors name the URL) and checks neither password reaches its output.
func TestRelayRedactsSecretsInURLs(t *testing.T) {
	b := relayBinary(t)
	const pgSecret, natsSecret = "PgS3cretChaos", "NatsS3cretChaos"
	ctx := ctxFor(t, time.Minute)
	cmd := exec.CommandContext(ctx, b.Path, "relay", "--log-level", "debug",
		"--database-url", "postgres://postgres:"+pgSecret+"@127.0.0.1:5432/test?sslmode=disable",
		"--schema", "chaos_never_migrated",
		"--broker", "nats://chaos:"+natsSecret+"@127.0.0.1:1",
		"--metrics-addr", "127.0.0.1:0")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done: // gave up on its own: its error is in out
	case <-time.After(4 * time.Second):
		_ = cmd.Process.Signal(interrupt)
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}
	got := out.String()
	if strings.TrimSpace(got) == "" {
		t.Fatal("the relay wrote nothing: the test would prove nothing")
	}
	for _, secret := range []string{pgSecret, natsSecret} {
		if strings.Contains(got, secret) {
			t.Errorf("the relay's output carries the password %q:\n%s", secret, got)
		}
	}
	if !strings.Contains(got, "127.0.0.1") {
		t.Errorf("the relay's output never names its endpoints, so redaction was not exercised:\n%s", got)
	}
}

// TestRelayMetricsLoopbackByDefault: without --metrics-addr the relay's
// HTTP endpoint binds to a loopback address.
func TestRelayMetricsLoopbackByDefault(t *testing.T) {
	b := relayBinary(t)
	out, err := exec.CommandContext(context.Background(), b.Path, "relay", "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("relay --help: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`--metrics-addr[^\n]*\(default "([^"]*)"\)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("relay --help shows no default for --metrics-addr:\n%s", out)
	}
	if addr := string(m[1]); !strings.HasPrefix(addr, "127.0.0.1:") && !strings.HasPrefix(addr, "[::1]:") && !strings.HasPrefix(addr, "localhost:") {
		t.Errorf("--metrics-addr defaults to %q, not a loopback address", addr)
	}
}

var interrupt = syscall.SIGTERM
