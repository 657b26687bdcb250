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

// Kinds of relay binary.
const (
	// KindRelay is `reliar relay` from cmd/reliar.
	KindRelay = "relay"
	// KindChild is the suite's own stand-in, internal/relaychild.
	KindChild = "child"
)

// Binary is the relay program the scenarios run.
type Binary struct {
	Path string
	Kind string
	// PerKey reports whether the relay has the --ordering flag.
	PerKey bool
}

// args prefixes the relay's arguments with its subcommand.
func (b Binary) args(a []string) []string {
	if b.Kind == KindRelay {
		return append([]string{"relay"}, a...)
	}
	return a
}

// BuildRelay builds the relay into dir. want is "relay" (cmd/reliar's
// relay subcommand, which must exist), "child" (the stand-in) or "" / "auto"
// (the relay when cmd/reliar builds and has a relay subcommand, else the
// stand-in).
// With race, the binary is built with the race detector: a race in the
// relay then fails its exit status.
func BuildRelay(ctx context.Context, dir, want string, race bool) (Binary, error) {
	root, err := repoRoot(ctx)
	if err != nil {
		return Binary{}, err
	}
	if want != KindChild {
		b := Binary{Path: filepath.Join(dir, "reliar"), Kind: KindRelay}
		err := goBuild(ctx, root, b.Path, "./cmd/reliar", race)
		var out []byte
		if err == nil {
			out, err = exec.CommandContext(ctx, b.Path, "relay", "--help").CombinedOutput()
		}
		switch {
		case err == nil:
			b.PerKey = strings.Contains(string(out), "--ordering")
			return b, nil
		case want == KindRelay:
			return Binary{}, fmt.Errorf("rig: reliar relay: %w: %s", err, out)
		}
	}
	b := Binary{Path: filepath.Join(dir, "relaychild"), Kind: KindChild, PerKey: true}
	return b, goBuild(ctx, root, b.Path, "./chaos/internal/relaychild", race)
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
