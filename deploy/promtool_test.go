package deploy_test

import (
	"os/exec"
	"strings"
	"testing"
)

// promtool runs Prometheus' promtool (Debian's prometheus package, which
// scripts/services.sh installs) and fails the test with its output when it
// fails or is missing.
func promtool(t *testing.T, args ...string) string {
	t.Helper()
	path, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatalf("promtool is not installed (scripts/services.sh installs Debian's prometheus package): %v", err)
	}
	out, err := exec.CommandContext(t.Context(), path, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestPromtoolCheckRules: Prometheus accepts the rules file.
func TestPromtoolCheckRules(t *testing.T) {
	out := promtool(t, "check", "rules", rulesFile)
	if !strings.Contains(out, "SUCCESS") {
		t.Fatalf("promtool check rules did not succeed:\n%s", out)
	}
}

// TestPromtoolTestRules: the alerts fire, and stay quiet, on the synthetic
// series of prometheus/reliar-relay.rules.test.yaml.
func TestPromtoolTestRules(t *testing.T) {
	out := promtool(t, "test", "rules", "prometheus/reliar-relay.rules.test.yaml")
	if !strings.Contains(out, "SUCCESS") {
		t.Fatalf("promtool test rules did not succeed:\n%s", out)
	}
}
