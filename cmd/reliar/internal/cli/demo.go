package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/reliar/reliar/cmd/reliar/internal/demo"
	"github.com/reliar/reliar/cmd/reliar/internal/exitcode"
	"github.com/reliar/reliar/cmd/reliar/internal/flagval"
	"github.com/reliar/reliar/cmd/reliar/internal/progress"
)

func newDemoCommand(app *App) *cobra.Command {
	var (
		cfg    demo.Config
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run the whole outbox path end to end, with nothing to install",
		Long: `demo simulates an orders service. Each transaction writes an order row and its
outbox message together; every tenth transaction is rolled back on purpose. A
dispatcher publishes the committed messages to NATS JetStream and a consumer
counts every delivery, duplicates included. The demo then checks that every
committed order's message arrived and no rolled-back one did, and measures the
latency from commit to delivery.

With no flags it runs on a SQLite file and an embedded NATS server in a temporary
folder, removed afterwards. --database-url runs it on a fresh PostgreSQL schema
(or MariaDB database) that is dropped afterwards; --nats-url on a stream of its
own, deleted afterwards.

The last line on stdout is
  demo: committed=N rolled_back=M published=N delivered=N lost=0 duplicates=D throughput=X/s p50=Yms p99=Zms
and the exit status is 1 if any message was lost or unexpected.`,
		Example: `  # Nothing to install: SQLite and an embedded NATS server
  reliar demo

  # A quicker run
  reliar demo --messages 1000

  # PostgreSQL and a NATS server of your own
  reliar demo --database-url postgres://postgres@127.0.0.1:5432/test --nats-url nats://127.0.0.1:4222`,
		Args: cobra.NoArgs,
	}
	f := cmd.Flags()
	flagval.Int(f, &cfg.Messages, "messages", demo.DefaultMessages, "orders to commit", 0)
	f.StringVar(&cfg.DatabaseURL, "database-url", "", "run on a fresh schema of this database: postgres://… or mysql://… (default: a SQLite file in a temporary folder)")
	f.StringVar(&cfg.NATSURL, "nats-url", "", "run on this NATS server with JetStream (default: an embedded server)")
	flagval.Int(f, &cfg.Producers, "producers", demo.DefaultProducers, "goroutines placing orders concurrently", 0)
	flagval.Duration(f, &cfg.Timeout, "timeout", demo.DefaultTimeout, "longest wait for the deliveries after the last commit", 0)
	f.BoolVar(&asJSON, "json", false, "print the result as one JSON document")

	cmd.RunE = app.run(func(ctx context.Context, cmd *cobra.Command) error {
		if cfg.DatabaseURL != "" {
			if _, err := app.Location(cfg.DatabaseURL); err != nil {
				return err
			}
		}
		out := app.Printer(cmd, asJSON)
		cfg.Logger = app.Log()
		cfg.Progress = func(total int) progress.Bar { return app.Progress(total, "delivered") }
		cfg.Announce = func(s demo.Setup) {
			_ = out.Line("demo: store %s; broker %s", s.Store, s.Broker)
			_ = out.Line("demo: dispatcher batch_size=%d max_in_flight=%d; %d orders, every %dth transaction rolled back",
				s.BatchSize, s.MaxInFlight, cfg.Messages, demo.RollbackEvery)
		}
		started := time.Now()
		res, err := demo.Run(ctx, cfg)
		if err != nil {
			return err
		}
		app.Log().Info("demo finished", "took", time.Since(started).Round(time.Millisecond))
		if asJSON {
			err = out.Document(demoJSON{Result: res, OK: res.OK()})
		} else {
			err = out.Final("%s", res.Summary())
		}
		if err != nil {
			return err
		}
		if !res.OK() {
			return exitcode.FailureError(fmt.Errorf("demo: %d committed messages lost, %d unexpected messages", res.Lost, res.Unexpected))
		}
		return nil
	})
	return cmd
}

// demoJSON is the demo's --json document.
type demoJSON struct {
	demo.Result
	OK bool `json:"ok"`
}
