package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/reliar/reliar/cmd/reliar/internal/exitcode"
	"github.com/reliar/reliar/cmd/reliar/internal/flagval"
	"github.com/reliar/reliar/cmd/reliar/internal/ops"
	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// defaultPurgeBatch is the batch size of reliar purge, the stores' own
// default.
const defaultPurgeBatch = 1000

// minDeadAge is the youngest a dead letter purge deletes without --force: an
// operator may not have seen a younger one yet.
const minDeadAge = time.Hour

func newPurgeCommand(app *App) *cobra.Command {
	var (
		db                 dbFlags
		publishedRetention time.Duration
		deadRetention      time.Duration
		batchSize          int
		loop               bool
		force              bool
		asJSON             bool
	)
	cmd := &cobra.Command{
		Use:   "purge",
		Short: "Delete old published and dead rows, and expire stale pending ones",
		Long: `purge runs the retention pass the relay's maintainer runs: it deletes published
rows older than --published-retention (default ` + flagval.FormatDuration(outbox.DefaultPublishedRetention) + `), deletes dead rows older
than --dead-retention (default ` + flagval.FormatDuration(outbox.DefaultDeadRetention) + `), and moves pending rows past their
expires_at to dead (reason expired). Each of the three statements touches at
most --batch-size rows, and never a leased row. One pass by default; --loop
repeats passes until one finds less than a batch for each statement, for a
backlog after an outage.

Durations take Go's units (90m, 36h) or whole days (14d). Zero, or unset, is
the default, in flags, RELIAR_* variables and the config file's purge: section
alike; "forever" keeps the rows. A dead letter younger than ` + flagval.FormatDuration(minDeadAge) + ` is never
deleted without --force (typed on the command line): a --dead-retention below
` + flagval.FormatDuration(minDeadAge) + ` is refused with exit status 2.

The last line on stdout is
  purge: published_deleted=N dead_deleted=N expired=N passes=P

Exit status: 0, 1 when the database fails or its schema is not migrated, 2 on
bad input.`,
		Example: `  reliar purge --database-url postgres://app@db/orders
  reliar purge --database-url postgres://app@db/orders --published-retention 1h --dead-retention 30d --loop
  reliar purge --database-url postgres://app@db/orders --dead-retention forever`,
		Args: cobra.NoArgs,
	}
	addDBFlags(cmd, &db, true)
	f := cmd.Flags()
	flagval.Duration(f, &publishedRetention, "published-retention", outbox.DefaultPublishedRetention, `delete published rows older than this ("forever" keeps them)`, 0, flagval.Forever)
	flagval.Duration(f, &deadRetention, "dead-retention", outbox.DefaultDeadRetention, `delete dead rows older than this, at least 1h without --force ("forever" keeps them)`, 0, flagval.Forever)
	flagval.Int(f, &batchSize, "batch-size", defaultPurgeBatch, "most rows each statement of a pass touches", 0)
	f.BoolVar(&loop, "loop", false, "repeat passes until one finds less than a batch")
	f.BoolVar(&force, "force", false, "allow --dead-retention below 1h (command line only)")
	f.BoolVar(&asJSON, "json", false, "print the result as one JSON document")

	cmd.RunE = app.run(func(ctx context.Context, cmd *cobra.Command) error {
		if deadRetention != outbox.KeepForever && deadRetention < minDeadAge && !force {
			return exitcode.UsageError(fmt.Errorf("--dead-retention %s would delete dead letters younger than %s, which nobody may have looked at yet: give a longer retention, or add --force on the command line to delete them anyway",
				ops.FormatDuration(deadRetention), ops.FormatDuration(minDeadAge)))
		}
		s, err := app.openOpsStore(ctx, db)
		if err != nil {
			return err
		}
		defer s.close(ctx)
		req := outboxdriver.PurgeRequest{PublishedRetention: retention(publishedRetention), DeadRetention: retention(deadRetention), BatchSize: batchSize}
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
		_ = out.Line("purge: %s; published %s, dead %s, batches of %d",
			s.backend.Describe(), retentionText(publishedRetention), retentionText(deadRetention), batchSize)
		return out.Final("purge: published_deleted=%d dead_deleted=%d expired=%d passes=%d",
			tally.PublishedDeleted, tally.DeadDeleted, tally.Expired, tally.Passes)
	})
	return cmd
}

// retention is the store's retention of a flag: nil, which skips the
// deletion, for "forever".
func retention(d time.Duration) *time.Duration {
	if d == outbox.KeepForever {
		return nil
	}
	return &d
}

// retentionText says what a retention deletes, for the summary.
func retentionText(d time.Duration) string {
	if d == outbox.KeepForever {
		return "kept forever"
	}
	return "older than " + ops.FormatDuration(d)
}
