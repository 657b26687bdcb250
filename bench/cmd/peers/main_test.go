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

	"github.com/reliar/reliar/bench/internal/report"
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
			if len(c.scenarios) != 5 || !c.scenarios["drain"] || !c.scenarios["enqueue-tx"] || !c.scenarios["latency"] || !c.scenarios["jetstream"] || !c.scenarios["burst"] {
				t.Errorf("scenarios %v", c.scenarios)
			}
			if c.enqueueTx != 1000 || c.burstMessages != 5000 || c.producers != 8 || c.fileDir != "" {
				t.Errorf("%+v", c)
			}
		}},
		{"quick defaults", []string{"-quick"}, nil, func(t *testing.T, c config) {
			if !c.quick || c.runTimeout != 10*time.Second || c.messages != 5000 || c.latencyMessages != 200 || c.results != "" || c.enqueueTx != 200 || c.burstMessages != 3000 {
				t.Errorf("%+v", c)
			}
		}},
		{"sqlite dir and burst", []string{"-sqlite-dir", "/var/tmp", "-producers", "4", "-burst-messages", "300", "-enqueue-tx", "50"}, nil, func(t *testing.T, c config) {
			if c.fileDir != "/var/tmp" || c.producers != 4 || c.burstMessages != 300 || c.enqueueTx != 50 {
				t.Errorf("%+v", c)
			}
		}},
		{"zero producers", []string{"-producers", "0"}, errUsage, nil},
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

func TestSystems(t *testing.T) {
	full, _ := parseFlags(nil, io.Discard)
	l := systems(full)
	if len(l.drain) != 15 || len(l.latency) != 11 || slices.ContainsFunc(names(l.latency), func(n string) bool { return strings.HasPrefix(n, "raw") }) {
		t.Errorf("full: drain %q, latency %q", names(l.drain), names(l.latency))
	}
	if len(l.jetstream) != 7 || len(l.enqueueTx) != 7 || len(l.burst) != 3 {
		t.Errorf("full: jetstream %q, enqueue-tx %q, burst %q", names(l.jetstream), names(l.enqueueTx), names(l.burst))
	}
	for _, sys := range append(append(slices.Clone(l.drain), l.enqueueTx...), l.burst...) {
		if strings.Contains(sys.Name, "sqlite") != sys.OnFile {
			t.Errorf("%s: OnFile %v", sys.Name, sys.OnFile)
		}
	}

	quick, _ := parseFlags([]string{"-quick"}, io.Discard)
	l = systems(quick)
	want := []string{"reliar defaults", "river tuned", "watermill tuned",
		"raw sql pgstore table", "raw sql pgstore table 4 conns", "raw sql pgstore table pipelined", "raw sql minimal table",
		"reliar sqlite", "river sqlite tuned"}
	if !slices.Equal(names(l.drain), want) {
		t.Errorf("quick drain %q, want %q", names(l.drain), want)
	}
	if want := []string{"reliar defaults", "river tuned"}; !slices.Equal(names(l.latency), want) {
		t.Errorf("quick latency %q, want %q", names(l.latency), want)
	}
	if want := []string{"reliar defaults", "river tuned", "watermill tuned", "raw sql minimal table"}; !slices.Equal(names(l.enqueueTx), want) {
		t.Errorf("quick enqueue-tx %q, want %q", names(l.enqueueTx), want)
	}
	if want := []string{"reliar defaults → jetstream", "pg → jetstream by hand ce headers", "pg → jetstream by hand 1 header"}; !slices.Equal(names(l.jetstream), want) {
		t.Errorf("quick jetstream %q, want %q", names(l.jetstream), want)
	}
	if want := []string{"reliar sqlite", "reliar sqlite demo settings"}; !slices.Equal(names(l.burst), want) {
		t.Errorf("quick burst %q, want %q", names(l.burst), want)
	}
	// Every system the quick line names runs in the quick run.
	q := quickSystems(quick)
	all := append(append(append(append(names(l.drain), names(l.latency)...), names(l.enqueueTx)...), names(l.jetstream)...), names(l.burst)...)
	for _, n := range []string{q.Reliar, q.Raw, q.Raw4Conns, q.RawPipelined, q.RawMinimal, q.Watermill, q.River,
		q.ReliarJetStream, q.HandJetStream, q.HandJetStreamOneHeader, q.ReliarSQLite, q.RiverSQLite} {
		if !slices.Contains(all, n) {
			t.Errorf("the quick line compares %q, which the quick run does not run", n)
		}
	}

	opts, _ := parseFlags([]string{"-only", "reliar defaults,reliar async-commit"}, io.Discard)
	l = systems(opts)
	if want := []string{"reliar defaults", "reliar async-commit"}; !slices.Equal(names(l.drain), want) || !slices.Equal(names(l.latency), want) || !slices.Equal(names(l.enqueueTx), want) {
		t.Errorf("only an option variant: drain %q latency %q enqueue-tx %q", names(l.drain), names(l.latency), names(l.enqueueTx))
	}
	if want := []string{"reliar defaults"}; !slices.Equal(names(l.burst), want) {
		t.Errorf("only: burst %q, want %q (named on PostgreSQL)", names(l.burst), want)
	}
	only, _ := parseFlags([]string{"-only", "raw sql pgstore table", "-scenarios", "drain"}, io.Discard)
	l = systems(only)
	if !slices.Equal(names(l.drain), []string{"raw sql pgstore table"}) || l.latency != nil || l.jetstream != nil || l.enqueueTx != nil || l.burst != nil {
		t.Errorf("only raw sql: %+v", l)
	}
}

// quickLine matches a complete quick line.
var quickLine = regexp.MustCompile(`^` + strings.Join(func() []string {
	var parts []string
	for _, k := range report.QuickKeys {
		parts = append(parts, k+`=([0-9]+\.[0-9]+|nan)`)
	}
	return parts
}(), " ") + `$`)

// TestQuickRun runs a miniature quick comparison end to end and checks
// that the ratio line comes last on stdout and that nothing else is there
// but the report.
func TestQuickRun(t *testing.T) {
	dir := t.TempDir()
	today := time.Now().UTC().Format("2006-01-02") // the files are named after the start
	var stdout, stderr bytes.Buffer
	args := []string{"-quick", "-reps", "1", "-messages", "600", "-latency-messages", "20", "-enqueue-tx", "20", "-burst-messages", "100",
		"-run-timeout", "60s", "-results", dir, "-sqlite-dir", t.TempDir(), "-cpuprofile", filepath.Join(dir, "prof")}
	if err := run(t.Context(), args, &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\nstderr:\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimRight(stdout.String(), "\n"), "\n")
	if last := lines[len(lines)-1]; !quickLine.MatchString(last) || strings.Contains(last, "nan") {
		t.Fatalf("last line %q is not the ratio line\nstdout:\n%s", last, stdout.String())
	}
	for _, sys := range []string{"| reliar defaults |", "| river tuned |", "| watermill tuned |", "| raw sql pgstore table |",
		"| raw sql minimal table |", "| reliar sqlite |", "| river sqlite tuned |",
		"| pg → jetstream by hand ce headers |", "| reliar defaults → jetstream |"} {
		if !strings.Contains(stdout.String(), sys) {
			t.Errorf("the tables lack %s:\n%s", sys, stdout.String())
		}
	}
	for _, f := range []string{"drain", "enqueue", "latency", "enqueue_tx", "jetstream", "burst", "burst_alone"} {
		f = today + "-" + f + ".jsonl"
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	for _, f := range []string{"prof/reliar-defaults-rep1.pprof"} {
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
