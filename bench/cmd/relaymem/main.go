// Command relaymem measures the memory of `reliar relay` draining a large
// backlog: it fills a fresh schema's outbox with -rows rows of 200 B (one
// INSERT … SELECT FROM generate_series), creates a JetStream stream that
// captures the relay's subjects, starts the relay binary given by -relay,
// samples its /proc/<pid>/status every second until no row is pending, and
// prints the peak resident set (VmHWM), the drain time and the stream's
// message count. It then stops the relay with SIGTERM and drops the stream
// and the schema. Linux only (/proc).
//
//	(cd .. && go build -o "$TMPDIR/reliar" ./cmd/reliar)
//	GOWORK=off go run ./cmd/relaymem -relay "$TMPDIR/reliar" [-- extra relay flags]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/reliar/reliar/bench/internal/benchcmd"
)

func main() { benchcmd.Main("relaymem", run) }

// errUsage marks bad command-line input.
var errUsage = benchcmd.ErrUsage

// config is what the flags set.
type config struct {
	relay   string
	dsn     string
	natsURL string
	rows    int
	args    []string
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("relaymem", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.relay, "relay", "", "path of the reliar binary (required)")
	fs.StringVar(&c.dsn, "dsn", "postgres://postgres@127.0.0.1:5432/test?sslmode=disable", "PostgreSQL database in which the run creates (and drops) its own schema")
	fs.StringVar(&c.natsURL, "nats", "nats://127.0.0.1:4222", "NATS server with JetStream")
	fs.IntVar(&c.rows, "rows", 1_000_000, "backlog size")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return c, err
		}
		return c, fmt.Errorf("%w: %w", errUsage, err)
	}
	if c.relay == "" || c.rows <= 0 {
		return c, fmt.Errorf("%w: -relay is required and -rows must be positive", errUsage)
	}
	c.args = fs.Args() // extra relay flags after --
	return c, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	res, err := measure(ctx, c, stderr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "rows=%d drain_s=%.1f msg_per_s=%.0f vm_hwm_mib=%.1f stream_msgs=%d relay_exit=%d\n",
		c.rows, res.drain.Seconds(), float64(c.rows)/res.drain.Seconds(), float64(res.hwmKiB)/1024, res.streamMsgs, res.exitCode)
	return nil
}
