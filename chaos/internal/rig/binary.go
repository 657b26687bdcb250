// Package rig runs one chaos scenario: a fresh outbox schema and JetStream
// stream, a producer, relays as child processes (behind fault-injecting
// proxies when asked), a sink, and the final check.
package rig

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// KindRelay is the only kind of relay binary: `reliar relay` from
// cmd/reliar. (The suite's former stand-in was removed once the real relay
// served every scenario.)
const KindRelay = "relay"

// Binary is the relay program the scenarios run.
type Binary struct {
	Path string
	Kind string
	// PerKey reports whether the relay has the --ordering flag.
	PerKey bool
	// Embedded is the producer that embeds the dispatcher
	// (internal/embedproducer).
	Embedded string
}

// args prefixes the relay's arguments with its subcommand.
func (b Binary) args(a []string) []string {
	return append([]string{"relay"}, a...)
}

// BuildRelay builds `reliar relay` into dir. want is "relay", or "" or
// "auto", which mean the same. With race, the binary is built with the
// race detector: a race in the relay then fails its exit status.
func BuildRelay(ctx context.Context, dir, want string, race bool) (Binary, error) {
	switch want {
	case "", "auto", KindRelay:
	default:
		return Binary{}, fmt.Errorf("rig: CHAOS_RELAY=%q: the suite runs reliar relay only (want relay, auto or nothing)", want)
	}
	root, err := repoRoot(ctx)
	if err != nil {
		return Binary{}, err
	}
	b := Binary{Path: filepath.Join(dir, "reliar"), Kind: KindRelay}
	if err := goBuild(ctx, root, b.Path, "./cmd/reliar", race); err != nil {
		return Binary{}, err
	}
	out, err := exec.CommandContext(ctx, b.Path, "relay", "--help").CombinedOutput()
	if err != nil {
		return Binary{}, fmt.Errorf("rig: reliar relay: %w: %s", err, out)
	}
	b.PerKey = strings.Contains(string(out), "--ordering")
	b.Embedded = filepath.Join(dir, "embedproducer")
	if err := goBuild(ctx, root, b.Embedded, "./chaos/internal/embedproducer", race); err != nil {
		return Binary{}, err
	}
	return b, nil
}

func goBuild(ctx context.Context, root, out, pkg string, race bool) error {
	args := []string{"build", "-o", out}
	if race {
		args = append(args, "-race")
	}
	cmd := exec.CommandContext(ctx, "go", append(args, pkg)...)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("rig: go build %s: %w: %s", pkg, err, b)
	}
	return nil
}

// repoRoot is the directory of the workspace's go.work.
func repoRoot(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOWORK").Output()
	if err != nil {
		return "", fmt.Errorf("rig: go env GOWORK: %w", err)
	}
	work := strings.TrimSpace(string(out))
	if work == "" || work == "off" {
		return "", errors.New("rig: the chaos suite builds the relay in workspace mode; GOWORK is off")
	}
	if _, err := os.Stat(work); err != nil {
		return "", fmt.Errorf("rig: %w", err)
	}
	return filepath.Dir(work), nil
}
