package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/reliar/reliar/cmd/reliar/internal/exitcode"
	"github.com/reliar/reliar/cmd/reliar/internal/ops"
	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// defaultPurgeBatch is the batch size of reliar purge, the stores' own
// default.
const defaultPurgeBatch = 1000

func newPurgeCommand(app *App) *cobra.Command {
	var (
		db                 dbFlags
		publishedRetention time.Duration
		deadRetention      time.Duration
		batchSize          int
		loop               bool
		asJSON             bool
	)
	cmd := &cobra.Command{
		Use:   "purge",
		Short: "Delete old published and dead rows, and expire stale pending ones",
		Long: `purge runs the retention pass the relay's maintainer runs: it deletes published
rows older than --published-retention, deletes dead rows older than
--dead-retention, and moves pending rows past their expires_at to dead (reason
expired). Each of the three statements touches at most --batch-size rows, and
never a leased row. One pass by default; --loop repeats passes until one finds
less than a batch for each statement, for a backlog after an outage.

Durations take Go's units (90m, 36h) or whole days (14d).

The last line on stdout is
  purge: published_deleted=N dead_deleted=N expired=N passes=P

Exit status: 0, 1 when the database fails or its schema is not migrated, 2 on
bad input.`,
		Example: `  reliar purge --database-url postgres://app@db/orders
  reliar purge --database-url postgres://app@db/orders --published-retention 1h --dead-retention 30d --loop`,
		Args: cobra.NoArgs,
	}
	addDBFlags(cmd, &db, true)
	f := cmd.Flags()
	ops.DurationVar(f, &publishedRetention, "published-retention", outbox.DefaultPublishedRetention, "delete published rows older than this")
	ops.DurationVar(f, &deadRetention, "dead-retention", outbox.DefaultDeadRetention, "delete dead rows older than this")
	f.IntVar(&batchSize, "batch-size", defaultPurgeBatch, "most rows each statement of a pass touches")
	f.BoolVar(&loop, "loop", false, "repeat passes until one finds less than a batch")
	f.BoolVar(&asJSON, "json", false, "print the result as one JSON document")

	cmd.RunE = app.run(func(ctx context.Context, cmd *cobra.Command) error {
		if batchSize <= 0 {
			return exitcode.UsageError(fmt.Errorf("--batch-size must be positive, not %d", batchSize))
		}
		s, err := app.openOpsStore(ctx, db)
		if err != nil {
			return err
		}
		defer s.close(ctx)
		req := outboxdriver.PurgeRequest{PublishedRetention: &publishedRetention, DeadRetention: &deadRetention, BatchSize: batchSize}
		tally, err := ops.Purge(ctx, s.store, req, loop, func(t ops.PurgeTally) {
			app.Log().Info("purge pass", "pass", t.Passes, "published_deleted", t.PublishedDeleted,
				"dead_deleted", t.DeadDeleted, "expired", t.Expired)
		})
		if err != nil {
			return err
		}
		out := app.Printer(cmd, asJSON)
		if asJSON {
			return out.Document(tally)
		}
		_ = out.Line("purge: %s; published older than %s, dead older than %s, batches of %d",
			s.backend.Describe(), ops.FormatDuration(publishedRetention), ops.FormatDuration(deadRetention), batchSize)
		return out.Final("purge: published_deleted=%d dead_deleted=%d expired=%d passes=%d",
			tally.PublishedDeleted, tally.DeadDeleted, tally.Expired, tally.Passes)
	})
	return cmd
}
