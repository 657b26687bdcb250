package main

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reliar/reliar/bench/internal/harness"
)

func TestParseFlags(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		wantErr error
		check   func(t *testing.T, c config)
	}{
		{"full defaults", nil, nil, func(t *testing.T, c config) {
			if c.quick || c.runTimeout != 2*time.Minute || c.messages != 20000 || c.latencyMessages != 1000 || c.reps != 3 || c.results != "results" || c.perTx != 100 || c.rate != 200 {
				t.Errorf("%+v", c)
			}
			if !c.scenarios["drain"] || !c.scenarios["latency"] || !c.scenarios["jetstream"] {
				t.Errorf("scenarios %v", c.scenarios)
			}
		}},
		{"quick defaults", []string{"-quick"}, nil, func(t *testing.T, c config) {
			if !c.quick || c.runTimeout != 10*time.Second || c.messages != 5000 || c.latencyMessages != 200 || c.results != "" {
				t.Errorf("%+v", c)
			}
		}},
		{"quick with results", []string{"-quick", "-results", "out"}, nil, func(t *testing.T, c config) {
			if c.results != "out" {
				t.Errorf("results %q", c.results)
			}
		}},
		{"no results", []string{"-results", "none"}, nil, func(t *testing.T, c config) {
			if c.results != "" {
				t.Errorf("results %q", c.results)
			}
		}},
		{"only and scenarios", []string{"-only", "raw sql, river tuned", "-scenarios", "drain"}, nil, func(t *testing.T, c config) {
			if !slices.Equal(c.only, []string{"raw sql", "river tuned"}) || len(c.scenarios) != 1 {
				t.Errorf("only %q scenarios %v", c.only, c.scenarios)
			}
		}},
		{"unknown scenario", []string{"-scenarios", "drain,soak"}, errUsage, nil},
		{"zero reps", []string{"-reps", "0"}, errUsage, nil},
		{"negative rate", []string{"-rate", "-1"}, errUsage, nil},
		{"unknown flag", []string{"-fast"}, errUsage, nil},
		{"stray argument", []string{"now"}, errUsage, nil},
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

func names(systems []harness.System) []string {
	var out []string
	for _, s := range systems {
		out = append(out, s.Name)
	}
	return out
}

func TestSystems(t *testing.T) {
	full, _ := parseFlags(nil, io.Discard)
	drain, latency := systems(full)
	if len(drain) != 8 || len(latency) != 7 || slices.Contains(names(latency), "raw sql") {
		t.Errorf("full: drain %v, latency %v", names(drain), names(latency))
	}
	if js := names(jetStreamSystems(full)); len(js) != 3 {
		t.Errorf("full: jetstream %v", js)
	}
	quick, _ := parseFlags([]string{"-quick"}, io.Discard)
	drain, latency = systems(quick)
	if want := []string{"reliar defaults", "river tuned", "watermill tuned", "raw sql"}; !slices.Equal(names(drain), want) {
		t.Errorf("quick drain %v, want %v", names(drain), want)
	}
	if !slices.Equal(names(latency), []string{"reliar defaults"}) || jetStreamSystems(quick) != nil {
		t.Errorf("quick latency %v, jetstream %v", names(latency), names(jetStreamSystems(quick)))
	}
	opts, _ := parseFlags([]string{"-only", "reliar defaults,reliar async-commit"}, io.Discard)
	drain, latency = systems(opts)
	if want := []string{"reliar defaults", "reliar async-commit"}; !slices.Equal(names(drain), want) || !slices.Equal(names(latency), want) {
		t.Errorf("only an option variant: drain %v latency %v", names(drain), names(latency))
	}
	only, _ := parseFlags([]string{"-only", "raw sql", "-scenarios", "drain"}, io.Discard)
	drain, latency = systems(only)
	if !slices.Equal(names(drain), []string{"raw sql"}) || latency != nil || jetStreamSystems(only) != nil {
		t.Errorf("only raw sql: drain %v latency %v", names(drain), names(latency))
	}
}

var quickLine = regexp.MustCompile(`^ratio_vs_raw=[0-9.]+ ratio_vs_watermill_tuned=[0-9.]+ ratio_vs_river_tuned=[0-9.]+ latency_p50_ms=[0-9.]+ latency_p99_ms=[0-9.]+$`)

// TestQuickRun runs a miniature quick comparison end to end and checks
// that the ratio line comes last on stdout and that nothing else is there
// but the report.
func TestQuickRun(t *testing.T) {
	dir := t.TempDir()
	today := time.Now().UTC().Format("2006-01-02") // the files are named after the start
	var stdout, stderr bytes.Buffer
	args := []string{"-quick", "-reps", "1", "-messages", "600", "-latency-messages", "20", "-results", dir, "-cpuprofile", filepath.Join(dir, "prof")}
	if err := run(t.Context(), args, &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\nstderr:\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimRight(stdout.String(), "\n"), "\n")
	if last := lines[len(lines)-1]; !quickLine.MatchString(last) {
		t.Fatalf("last line %q is not the ratio line\nstdout:\n%s", last, stdout.String())
	}
	for _, sys := range []string{"| reliar defaults |", "| river tuned |", "| watermill tuned |", "| raw sql |"} {
		if !strings.Contains(stdout.String(), sys) {
			t.Errorf("the table lacks %s:\n%s", sys, stdout.String())
		}
	}
	for _, f := range []string{today + "-drain.jsonl", today + "-enqueue.jsonl", today + "-latency.jsonl", "prof/reliar-defaults-rep1.pprof"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
}

func TestFileName(t *testing.T) {
	for in, want := range map[string]string{
		"reliar defaults":              "reliar-defaults",
		"reliar batch 512 → jetstream": "reliar-batch-512-jetstream",
		"  Odd/Name  ":                 "odd-name",
	} {
		if got := fileName(in); got != want {
			t.Errorf("fileName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRunUsageError(t *testing.T) {
	if err := run(t.Context(), []string{"-reps", "x"}, io.Discard, io.Discard); !errors.Is(err, errUsage) {
		t.Fatalf("error = %v, want errUsage", err)
	}
}
