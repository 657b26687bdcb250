// Command drainprobe times one Reliar drain from the store's side: it fills
// a fresh schema's outbox with -n messages (100 per transaction, through
// pgstore's Enqueue), runs one dispatcher at default settings (or -batch,
// -max-in-flight) with a publisher that only counts, and wraps the store so
// that every Acquire and Complete is timed. It prints the drain rate, how
// busy the claim and the completion were (the share of the drain during
// which one was in flight), this process's CPU time per message and the
// machine's CPU use over the drain (from /proc/stat), and the share of
// updates PostgreSQL made heap-only. With -raw the pinned raw-SQL loop of
// the peer harness drains the same rows instead, for comparison on
// identical data. Linux only (/proc).
//
//	GOWORK=off go run ./cmd/drainprobe [-n 100000] [-raw] [-cpuprofile file]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/reliar/reliar/bench/internal/benchcmd"
)

func main() {
	benchcmd.Main("drainprobe", func(ctx context.Context, args []string, stdout, _ io.Writer) error {
		return run(ctx, args, stdout)
	})
}

// config is the command line.
type config struct {
	dsn         string
	messages    int
	batch       int
	maxInFlight int
	raw         bool
	cpuProfile  string
}

func parse(args []string, out io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("drainprobe", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&c.dsn, "dsn", "postgres://postgres@127.0.0.1:5432/test?sslmode=disable", "PostgreSQL connection string")
	fs.IntVar(&c.messages, "n", 100000, "messages to drain (a multiple of 100)")
	fs.IntVar(&c.batch, "batch", 0, "BatchSize (0: the default)")
	fs.IntVar(&c.maxInFlight, "max-in-flight", 0, "MaxInFlight (0: the default)")
	fs.BoolVar(&c.raw, "raw", false, "drain with the pinned raw-SQL loop instead of Reliar")
	fs.StringVar(&c.cpuProfile, "cpuprofile", "", "write a CPU profile of the drain to this file")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if c.messages <= 0 || c.messages%100 != 0 {
		return c, fmt.Errorf("-n must be a positive multiple of 100, got %d", c.messages)
	}
	return c, nil
}
