// Command fairness measures fair claiming across tenants (issue 21):
// Reliar's dispatcher at outbox.DefaultSettings() with Fairness
// FairnessTenant beside the unfair claim (FairnessUnordered), in one run,
// interleaved, every run on a fresh schema of the local PostgreSQL:
//
//   - backlog: tenant "big" has a backlog of -backlog rows (one plain-SQL
//     INSERT … SELECT FROM generate_series, nothing dispatching); then the
//     dispatcher starts and tenant "small" commits -rate single-message
//     transactions a second (Store.Enqueue in a pgx.Tx, the commit time
//     taken when Commit returns) until the database has marked every row of
//     the backlog published. It reports the small tenant's commit → publish
//     p50/p99 over the messages committed while the backlog drained, split
//     at the start of the claim that took each message (its
//     last_claimed_at), and the big tenant's drain rate (backlog over the time from the dispatcher's
//     start to the last backlog row marked published);
//   - idle: the same small-tenant stream on an empty table (-idle-messages
//     transactions, after one unmeasured warm-up message);
//   - claims: -tenants tenants with -per-tenant due rows each; Store.Acquire
//     of BatchSize 512 (the default) repeated until it returns no row, each
//     batch completed (untimed) as a dispatcher would; the claim cost is the
//     time spent in the Acquire calls that returned rows over the rows.
//
// The publisher does nothing but record each message's arrival in a sink
// (bench/internal/sink), by the sequence number its payload carries. The
// report goes to stdout: a table, the targets' status, and a last line
//
//	fairness: small_p99_tenant_ms=… small_p99_unfair_ms=… small_p99_idle_ms=… p99_ratio_vs_idle=… drain_ratio=… claim_cost_ratio=…
//
// where the idle p99 is the one measured under FairnessTenant. Progress
// goes to stderr.
//
//	cd bench && GOWORK=off go run ./cmd/fairness [-quick] [-reps 3]
package main

import (
	"context"
	"io"

	"github.com/reliar/reliar/bench/internal/benchcmd"
)

func main() { benchcmd.Main("fairness", run) }

// errUsage marks bad command-line input.
var errUsage = benchcmd.ErrUsage

// run is the command, with its streams as arguments so that tests can run it.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	return measure(ctx, c, stdout, stderr)
}
