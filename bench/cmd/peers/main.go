// Command peers runs Reliar against River, watermill's forwarder and raw
// SQL loops on the local PostgreSQL, Reliar's SQLite store against River's
// SQLite driver, and both Reliar and a hand-written pipeline through NATS
// JetStream: interleaved, each run on a fresh schema or file, and prints
// tables of medians. With -quick it runs a reduced comparison in under
// 150 s whose last line is the ratio line of report.QuickKeys, starting
//
//	ratio_vs_raw=R ratio_vs_watermill_tuned=W ratio_vs_river_tuned=V latency_p50_ms=L latency_p99_ms=M …
//
// Progress goes to stderr, the report to stdout, and every run's raw
// result, as a JSON line, to results/<date>-<scenario>.jsonl.
package main

import (
	"context"
	"io"

	"github.com/reliar/reliar/bench/internal/benchcmd"
)

func main() { benchcmd.Main("peers", run) }

// errUsage marks bad command-line input.
var errUsage = benchcmd.ErrUsage

// run is the command, with its streams as arguments so that tests can run it.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	return compare(ctx, cfg, stdout, stderr)
}
