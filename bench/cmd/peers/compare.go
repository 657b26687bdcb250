package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/reliar/reliar/bench/internal/harness"
	"github.com/reliar/reliar/bench/internal/payload"
	"github.com/reliar/reliar/bench/internal/report"
)

// quickBudget is how long a quick run may take on the 2-core reference
// machine.
const quickBudget = 150 * time.Second

// compare runs the comparison and writes the report.
func compare(ctx context.Context, c config, stdout, stderr io.Writer) error {
	start := time.Now()
	l := systems(c)
	h := &harness.Harness{DSN: c.dsn, Quick: c.quick, FileDir: c.fileDir}
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
		DrainSystems:   l.drain,
		Latency:        harness.LatencyConfig{Messages: c.latencyMessages, Rate: c.rate, Timeout: c.runTimeout},
		LatencySystems: l.latency,
		JetStream: harness.DrainConfig{Messages: c.messages, PerTx: c.perTx, Timeout: c.runTimeout,
			Scenario: report.JetStream},
		JetStreamSystems: l.jetstream,
		EnqueueTx:        harness.EnqueueTxConfig{Transactions: c.enqueueTx, Timeout: c.runTimeout},
		EnqueueTxSystems: l.enqueueTx,
		Burst:            harness.BurstConfig{Messages: c.burstMessages, Producers: c.producers, Timeout: c.runTimeout},
		BurstSystems:     l.burst,
	}
	runErr := h.Run(ctx, plan, emit)

	sums := report.Summarize(results)
	fmt.Fprintf(stdout, "%d messages of %d B per drain run, %d per transaction; latency: %d transactions at %d/s; enqueue-tx: %d single-message transactions; burst: %d single-message transactions from %d producers; %d interleaved repetitions; medians (low–high)\n\n",
		c.messages, payload.Size, c.perTx, c.latencyMessages, c.rate, c.enqueueTx, c.burstMessages, c.producers, c.reps)
	if err := report.Table(stdout, sums); err != nil {
		return err
	}
	for _, table := range []func(io.Writer, []report.Summary) error{report.JetStreamTable, report.BurstTable} {
		var b strings.Builder
		if err := table(&b, sums); err != nil {
			return err
		}
		if b.Len() > 0 {
			fmt.Fprintf(stdout, "\n%s", b.String())
		}
	}
	if files != nil {
		fmt.Fprintf(stderr, "results: %s\n", strings.Join(files.Paths(), ", "))
	}
	took := time.Since(start).Round(time.Second)
	fmt.Fprintf(stderr, "took %s\n", took)
	if c.quick && took > quickBudget {
		fmt.Fprintf(stderr, "peers: the quick run took %s, over its budget of %s\n", took, quickBudget)
	}
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
	// A value none of whose runs succeeded is "nan" on the line, which is
	// printed whole all the same, and the run fails.
	line, err := report.QuickLine(sums, quickSystems(c))
	if runErr != nil && err == nil {
		fmt.Fprintln(stderr, "peers: some runs failed; the ratios use the others:", runErr)
	}
	fmt.Fprintln(stdout, line)
	if err != nil {
		return errors.Join(runErr, err)
	}
	return nil
}

// progress is the stderr line of one result.
func progress(r report.Result) string {
	head := fmt.Sprintf("%-11s rep %d %-32s", r.Scenario, r.Rep, r.System)
	switch {
	case !r.OK():
		return head + " FAILED: " + r.Error
	case r.Scenario == report.Latency:
		return fmt.Sprintf("%s p50 %.2f ms  p99 %.2f ms  max %.2f ms  tx p50 %.2f ms  dups %d", head, r.P50Ms, r.P99Ms, r.MaxMs, r.EnqueueTxP50Ms, r.Duplicates)
	case r.Scenario == report.EnqueueTx, r.Scenario == report.BurstAlone:
		return fmt.Sprintf("%s %8.0f tx/s  p50 %.2f ms  p99 %.2f ms  max %.2f ms", head, r.PerSecond, r.P50Ms, r.P99Ms, r.MaxMs)
	case r.Scenario == report.Burst:
		return fmt.Sprintf("%s %8.0f msg/s delivered  commit → delivery p50 %.2f ms  p99 %.2f ms  max %.2f ms  tx p50 %.2f ms  dups %d",
			head, r.PerSecond, r.P50Ms, r.P99Ms, r.MaxMs, r.EnqueueTxP50Ms, r.Duplicates)
	case r.Scenario == report.Enqueue:
		return fmt.Sprintf("%s %8.0f msg/s  %.2fs", head, r.PerSecond, r.Seconds)
	default:
		return fmt.Sprintf("%s %8.0f msg/s  %.2fs  cpu %.1f µs/msg  dups %d", head, r.PerSecond, r.Seconds, r.CPUNsPerMsg/1000, r.Duplicates)
	}
}
