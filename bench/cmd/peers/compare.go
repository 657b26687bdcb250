package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/reliar/reliar/bench/internal/harness"
	"github.com/reliar/reliar/bench/internal/rawsql"
	"github.com/reliar/reliar/bench/internal/reliarrun"
	"github.com/reliar/reliar/bench/internal/report"
	"github.com/reliar/reliar/bench/internal/riverrun"
	"github.com/reliar/reliar/bench/internal/watermillrun"
)

// systems returns the drain and latency systems of the mode, filtered by
// -only.
func systems(c config) (drain, latency []harness.System) {
	if c.quick {
		drain = []harness.System{
			reliarrun.Defaults().System(), riverrun.Tuned().System(),
			watermillrun.Tuned().System(), rawsql.System(),
		}
		latency = []harness.System{reliarrun.Defaults().System()}
	} else {
		latency = []harness.System{
			reliarrun.Defaults().System(), reliarrun.Batch512().System(), reliarrun.Batch512Overlap().System(),
			riverrun.Defaults().System(), riverrun.Tuned().System(),
			watermillrun.Defaults().System(), watermillrun.Tuned().System(),
		}
		// The raw loop is a throughput ceiling; it has no wake-up design
		// whose latency would mean anything.
		drain = append(slices.Clone(latency), rawsql.System())
	}
	// The store option variants run only when named: they are
	// experiments of the speed work, not part of the comparison.
	if len(c.only) > 0 && !c.quick {
		for _, v := range reliarrun.Options() {
			latency = append(latency, v.System())
			drain = append(drain, v.System())
		}
	}
	keep := func(s harness.System) bool { return len(c.only) > 0 && !slices.Contains(c.only, s.Name) }
	if !c.scenarios["drain"] {
		drain = nil
	}
	if !c.scenarios["latency"] {
		latency = nil
	}
	return slices.DeleteFunc(drain, keep), slices.DeleteFunc(latency, keep)
}

// compare runs the comparison and writes the report.
func compare(ctx context.Context, c config, stdout, stderr io.Writer) error {
	start := time.Now()
	drain, latency := systems(c)
	h := &harness.Harness{DSN: c.dsn, Quick: c.quick}
	if c.profileDir != "" {
		h.Around = cpuProfiler(c.profileDir, stderr)
	}
	var files *report.Files
	if c.results != "" {
		var err error
		if files, err = report.NewFiles(c.results, start); err != nil {
			return err
		}
		defer files.Close()
	}
	var mu sync.Mutex
	var results []report.Result
	var writeErrs []error
	emit := func(r report.Result) {
		mu.Lock()
		defer mu.Unlock()
		results = append(results, r)
		fmt.Fprintln(stderr, progress(r))
		if files != nil {
			if err := files.Write(r); err != nil {
				writeErrs = append(writeErrs, err)
			}
		}
	}
	plan := harness.Plan{
		Reps:           c.reps,
		Drain:          harness.DrainConfig{Messages: c.messages, PerTx: c.perTx, Timeout: c.runTimeout},
		DrainSystems:   drain,
		Latency:        harness.LatencyConfig{Messages: c.latencyMessages, Rate: c.rate, Timeout: c.runTimeout},
		LatencySystems: latency,
		JetStream: harness.DrainConfig{Messages: c.messages, PerTx: c.perTx, Timeout: c.runTimeout,
			Scenario: report.JetStream},
		JetStreamSystems: jetStreamSystems(c),
	}
	runErr := h.Run(ctx, plan, emit)

	sums := report.Summarize(results)
	fmt.Fprintf(stdout, "%d messages of %d B per drain run, %d per transaction; latency: %d transactions at %d/s; %d interleaved repetitions; medians (low–high)\n\n",
		c.messages, 200, c.perTx, c.latencyMessages, c.rate, c.reps)
	if err := report.Table(stdout, sums); err != nil {
		return err
	}
	if js := jetStreamTable(sums); js != "" {
		fmt.Fprintln(stdout)
		fmt.Fprint(stdout, js)
	}
	if files != nil {
		fmt.Fprintf(stderr, "results: %s\n", strings.Join(files.Paths(), ", "))
	}
	fmt.Fprintf(stderr, "took %s\n", time.Since(start).Round(time.Second))
	if err := errors.Join(writeErrs...); err != nil {
		return err
	}
	if !c.quick {
		return runErr
	}
	// A quick run still answers when a repetition failed (a peer stalled
	// behind another session's long transaction, say), from the medians
	// of the runs that succeeded; the failures are on stderr and in the
	// table's last column.
	line, err := report.QuickLine(sums, reliarrun.Defaults().Name, rawsql.System().Name,
		watermillrun.Tuned().Name, riverrun.Tuned().Name)
	if err != nil {
		return errors.Join(runErr, err)
	}
	if runErr != nil {
		fmt.Fprintln(stderr, "peers: some runs failed; the ratios use the others:", runErr)
	}
	fmt.Fprintln(stdout, line)
	return nil
}

// progress is the stderr line of one result.
func progress(r report.Result) string {
	head := fmt.Sprintf("%-9s rep %d %-20s", r.Scenario, r.Rep, r.System)
	switch {
	case !r.OK():
		return head + " FAILED: " + r.Error
	case r.Scenario == report.Latency:
		return fmt.Sprintf("%s p50 %.2f ms  p99 %.2f ms  max %.2f ms  dups %d", head, r.P50Ms, r.P99Ms, r.MaxMs, r.Duplicates)
	case r.Scenario == report.Enqueue:
		return fmt.Sprintf("%s %8.0f msg/s  %.2fs", head, r.PerSecond, r.Seconds)
	default:
		return fmt.Sprintf("%s %8.0f msg/s  %.2fs  cpu %.1f µs/msg  dups %d", head, r.PerSecond, r.Seconds, r.CPUNsPerMsg/1000, r.Duplicates)
	}
}
