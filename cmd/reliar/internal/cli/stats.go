package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/reliar/reliar/cmd/reliar/internal/ops"
)

func newStatsCommand(app *App) *cobra.Command {
	var (
		db     dbFlags
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "stats",
		Short: "Count the outbox table's rows by state",
		Long: `stats counts the rows of the outbox table that are not published, by state
(due, leased, scheduled, expired_pending, and their sum pending), the dead rows,
and how long the oldest due row has waited. It reads the store's partial indexes,
not the published rows, and works on PostgreSQL, SQLite and MariaDB alike.

The last line on stdout is
  stats: pending=N due=N leased=N scheduled=N expired_pending=N dead=N oldest_due_age=D
With --json, one object with the keys pending, due, leased, scheduled, dead,
expired_pending, oldest_due_age_seconds (0 when nothing is due) and as_of.

Exit status: 0, 1 when the database cannot be read or its schema is not
migrated, 2 on bad input.`,
		Example: `  reliar stats --database-url postgres://app@db:5432/orders --schema billing
  reliar stats --database-url sqlite://orders.db --json`,
		Args: cobra.NoArgs,
	}
	addDBFlags(cmd, &db, true)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as one JSON document")

	cmd.RunE = app.run(func(ctx context.Context, cmd *cobra.Command) error {
		s, err := app.openOpsStore(ctx, db)
		if err != nil {
			return err
		}
		defer s.close(ctx)
		st, err := s.store.Stats(ctx)
		if err != nil {
			return err
		}
		out := app.Printer(cmd, asJSON)
		if asJSON {
			return out.Document(ops.NewStatsDocument(st))
		}
		_ = out.Line("stats: %s", s.backend.Describe())
		for _, l := range ops.StatsTable(st) {
			if err := out.Line("%s", l); err != nil {
				return err
			}
		}
		return out.Final("%s", ops.StatsSummary(st))
	})
	return cmd
}
