package main

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
)

func TestParseFlags(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		wantErr error
		check   func(t *testing.T, c config)
	}{
		{"defaults", []string{"-relay", "r"}, nil, func(t *testing.T, c config) {
			if c.relay != "r" || c.rows != 1_000_000 || c.natsURL != "nats://127.0.0.1:4222" || len(c.args) != 0 {
				t.Errorf("%+v", c)
			}
		}},
		{"extra relay flags", []string{"-relay", "r", "-rows", "10", "--", "--batch-size", "100"}, nil, func(t *testing.T, c config) {
			if c.rows != 10 || !slices.Equal(c.args, []string{"--batch-size", "100"}) {
				t.Errorf("%+v", c)
			}
		}},
		{"no relay", nil, errUsage, nil},
		{"zero rows", []string{"-relay", "r", "-rows", "0"}, errUsage, nil},
		{"unknown flag", []string{"-fast"}, errUsage, nil},
		{"help", []string{"-h"}, flag.ErrHelp, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parseFlags(tc.args, io.Discard)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("error = %v, want %v", err, tc.wantErr)
			}
			if tc.check != nil {
				tc.check(t, c)
			}
		})
	}
}

func TestMemoryOfThisProcess(t *testing.T) {
	hwm, rss, err := memory(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if rss <= 0 || hwm < rss {
		t.Fatalf("VmHWM %d kB, VmRSS %d kB", hwm, rss)
	}
	if _, _, err := memory(-1); err == nil {
		t.Fatal("no error for a process that does not exist")
	}
}

// TestMeasureSmallBacklog builds the relay from this repository and runs
// the whole measurement on a small backlog against the local PostgreSQL
// and NATS.
func TestMeasureSmallBacklog(t *testing.T) {
	relay := filepath.Join(t.TempDir(), "reliar")
	build := exec.CommandContext(t.Context(), "go", "build", "-o", relay, "./cmd/reliar")
	build.Dir = filepath.Join("..", "..", "..")
	// This module builds with GOWORK=off; the relay builds in the
	// repository's workspace.
	build.Env = append(os.Environ(), "GOWORK=")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the relay: %v\n%s", err, out)
	}
	var stdout bytes.Buffer
	if err := run(t.Context(), []string{"-relay", relay, "-rows", "3000", "--", "--batch-size", "100"}, &stdout, io.Discard); err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`^rows=3000 drain_s=[0-9.]+ msg_per_s=[0-9]+ vm_hwm_mib=[0-9.]+ stream_msgs=3000 relay_exit=0\n$`)
	if !line.MatchString(stdout.String()) {
		t.Fatalf("output %q", stdout.String())
	}
}
