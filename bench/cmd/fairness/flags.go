package main

import (
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/reliar/reliar/bench/internal/pgenv"
)

// config is what the flags set.
type config struct {
	quick        bool
	dsn          string
	reps         int
	backlog      int
	rate         int
	idleMessages int
	tenants      int
	perTenant    int
	runTimeout   time.Duration
}

// parseFlags reads args; sizes left at zero take the full or quick defaults.
func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("fairness", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.BoolVar(&c.quick, "quick", false, "reduced run (under 60 s): backlog 10000, 1000 tenants, 40 idle messages")
	fs.StringVar(&c.dsn, "dsn", pgenv.DefaultDSN, "PostgreSQL database in which every run creates (and drops) its own schema")
	fs.IntVar(&c.reps, "reps", 1, "repetitions of every run, interleaved across the two claims")
	fs.IntVar(&c.backlog, "backlog", 0, "rows of the big tenant's backlog (default 100000, quick 10000)")
	fs.IntVar(&c.rate, "rate", 20, "single-message transactions per second of the small tenant")
	fs.IntVar(&c.idleMessages, "idle-messages", 0, "measured messages of the idle run (default 200, quick 40)")
	fs.IntVar(&c.tenants, "tenants", 0, "tenants with due rows in the claim-cost run (default 10000, quick 1000)")
	fs.IntVar(&c.perTenant, "per-tenant", 3, "due rows of every tenant in the claim-cost run")
	fs.DurationVar(&c.runTimeout, "run-timeout", 0, "bound of one run (default 3m, quick 30s)")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return c, err
		}
		return c, fmt.Errorf("%w: %w", errUsage, err)
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("%w: unexpected arguments %q", errUsage, fs.Args())
	}
	if c.backlog == 0 {
		c.backlog = pick(c.quick, 10000, 100000)
	}
	if c.idleMessages == 0 {
		c.idleMessages = pick(c.quick, 40, 200)
	}
	if c.tenants == 0 {
		c.tenants = pick(c.quick, 1000, 10000)
	}
	if c.runTimeout == 0 {
		c.runTimeout = time.Duration(pick(c.quick, 30, 180)) * time.Second
	}
	if c.reps <= 0 || c.backlog <= 0 || c.rate <= 0 || c.idleMessages <= 0 || c.tenants <= 0 || c.perTenant <= 0 || c.runTimeout <= 0 {
		return c, fmt.Errorf("%w: -reps, -backlog, -rate, -idle-messages, -tenants, -per-tenant and -run-timeout must be positive", errUsage)
	}
	return c, nil
}

func pick(quick bool, q, full int) int {
	if quick {
		return q
	}
	return full
}
