package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/reliar/reliar/bench/internal/pgenv"
)

// config is what the flags set.
type config struct {
	quick           bool
	dsn             string
	reps            int
	messages        int
	perTx           int
	latencyMessages int
	rate            int
	runTimeout      time.Duration
	results         string
	profileDir      string
	only            []string
	scenarios       map[string]bool
	natsURL         string
	enqueueTx       int
	burstMessages   int
	producers       int
	fileDir         string
}

// scenarioNames are the scenarios -scenarios accepts, in the order they run.
var scenarioNames = []string{"drain", "enqueue-tx", "latency", "jetstream", "burst"}

// parseFlags reads args; sizes left at zero take the full or quick defaults.
func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	var only, scenarios string
	fs := flag.NewFlagSet("peers", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.BoolVar(&c.quick, "quick", false, "reduced run (under 150 s): 5,000 messages, the systems of the ratio line only; prints the ratio line last")
	fs.StringVar(&c.dsn, "dsn", pgenv.DefaultDSN, "PostgreSQL database in which every run creates (and drops) its own schema")
	fs.IntVar(&c.reps, "reps", 3, "repetitions of every run, interleaved across systems")
	fs.IntVar(&c.messages, "messages", 0, "drain backlog (default 20000, quick 5000)")
	fs.IntVar(&c.perTx, "per-tx", 100, "messages per producer transaction in the drain preload")
	fs.IntVar(&c.latencyMessages, "latency-messages", 0, "single-message transactions per latency run (default 1000, quick 200)")
	fs.IntVar(&c.rate, "rate", 200, "latency transactions per second")
	fs.DurationVar(&c.runTimeout, "run-timeout", 0, "bound of one run (default 2m, quick 10s)")
	fs.StringVar(&c.results, "results", "", `directory for the JSON lines (default "results", or none with -quick); "none" writes none`)
	fs.StringVar(&c.profileDir, "cpuprofile", "", "directory for a CPU profile of every Reliar drain run")
	fs.StringVar(&only, "only", "", "comma-separated system names to run (default: all of the mode; the store option variants \"reliar async-commit\", \"reliar delete-on-complete\" and \"reliar async+delete\" run only when named)")
	fs.StringVar(&scenarios, "scenarios", strings.Join(scenarioNames, ","), "comma-separated scenarios: drain (with enqueue), enqueue-tx, latency, jetstream, burst")
	fs.StringVar(&c.natsURL, "nats", "nats://127.0.0.1:4222", "NATS server of the jetstream scenario")
	fs.IntVar(&c.enqueueTx, "enqueue-tx", 0, "single-message transactions per enqueue-tx run (default 1000, quick 200)")
	fs.IntVar(&c.burstMessages, "burst-messages", 0, "single-message transactions per burst run (default 5000, quick 3000)")
	fs.IntVar(&c.producers, "producers", 8, "concurrent producers of the burst scenario (reliar demo's default)")
	fs.StringVar(&c.fileDir, "sqlite-dir", "", "where the SQLite runs create their database files (default: the system's temporary directory; put it on the disk you care about)")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return c, err
		}
		return c, fmt.Errorf("%w: %w", errUsage, err)
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("%w: unexpected arguments %q", errUsage, fs.Args())
	}
	if c.messages == 0 {
		c.messages = pick(c.quick, 5000, 20000)
	}
	if c.runTimeout == 0 {
		c.runTimeout = time.Duration(pick(c.quick, 10, 120)) * time.Second
	}
	if c.latencyMessages == 0 {
		c.latencyMessages = pick(c.quick, 200, 1000)
	}
	if c.enqueueTx == 0 {
		c.enqueueTx = pick(c.quick, 200, 1000)
	}
	if c.burstMessages == 0 {
		c.burstMessages = pick(c.quick, 3000, 5000)
	}
	switch {
	case c.results == "none":
		c.results = ""
	case c.results == "" && !c.quick:
		c.results = "results"
	}
	switch {
	case c.reps <= 0, c.messages <= 0, c.perTx <= 0, c.latencyMessages <= 0, c.rate <= 0, c.runTimeout <= 0,
		c.enqueueTx <= 0, c.burstMessages <= 0, c.producers <= 0:
		return c, fmt.Errorf("%w: -reps, -messages, -per-tx, -latency-messages, -rate, -run-timeout, -enqueue-tx, -burst-messages and -producers must be positive", errUsage)
	}
	c.only = splitList(only)
	c.scenarios = map[string]bool{}
	for _, s := range splitList(scenarios) {
		if !slices.Contains(scenarioNames, s) {
			return c, fmt.Errorf("%w: unknown scenario %q", errUsage, s)
		}
		c.scenarios[s] = true
	}
	return c, nil
}

func pick(quick bool, q, full int) int {
	if quick {
		return q
	}
	return full
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
