package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/reliar/reliar/cmd/reliar/internal/flagval"
	"github.com/reliar/reliar/cmd/reliar/internal/ops"
	"github.com/reliar/reliar/cmd/reliar/internal/output"
	"github.com/reliar/reliar/outbox"
)

func newStatsCommand(app *App) *cobra.Command {
	var (
		db      dbFlags
		asJSON  bool
		tenants int
	)
	cmd := &cobra.Command{
		Use:   "stats",
		Short: "Count the outbox table's rows by state",
		Long: `stats counts the rows of the outbox table that are not published, by state
(due, leased, scheduled, expired_pending, and their sum pending), the dead rows,
and how long the oldest due row has waited. It reads the store's partial indexes,
not the published rows, and works on PostgreSQL, SQLite and MariaDB alike.

On a store that can list its tenants (PostgreSQL), a second table shows the
tenants with due rows, the longest waiting first: at most --tenants of them
(default 10; "off" hides it), each with its due rows and how long its oldest due
row has waited ("-" stands for the rows without a tenant). SQLite and MariaDB
cannot list tenants: the table is left out.

On PostgreSQL, rows restored from another cluster can carry a transaction id
ahead of the database's counter: a per-key claim takes neither them nor the
later rows of their keys until reliar repair xids gives them this database's
ids. stats counts them among the due rows, says how many of those a per-key
claim cannot take, and which keys they block. When row-level security may hide
rows from the role stats runs as, a line says so: the counts leave them out.

The last line on stdout is
  stats: pending=N due=N leased=N scheduled=N expired_pending=N dead=N oldest_due_age=D
With --json, one object with the keys pending, due, leased, scheduled, dead,
expired_pending, oldest_due_age_seconds (0 when nothing is due), as_of, and
tenants: an array of {tenant_id, due, oldest_due_age_seconds} (tenant_id ""
for the rows without a tenant), empty when no tenant has due rows, null when
the store cannot list tenants or --tenants is off; and on PostgreSQL only,
xid_ahead: {rows, keys, due_blocked}, and row_security_may_hide_rows: true
where row-level security may hide rows from the role (left out otherwise).

Exit status: 0, 1 when the database cannot be read or its schema is not
migrated, 2 on bad input.`,
		Example: `  reliar stats --database-url postgres://app@db:5432/orders --schema billing
  reliar stats --database-url postgres://app@db:5432/orders --tenants 25
  reliar stats --database-url sqlite://orders.db --json`,
		Args: cobra.NoArgs,
	}
	addDBFlags(cmd, &db, true)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as one JSON document")
	flagval.Int(cmd.Flags(), &tenants, "tenants", ops.DefaultTenants,
		fmt.Sprintf(`tenants with due rows to list, the longest waiting first, at most %d; "off" hides them (PostgreSQL only)`, ops.MaxTenants),
		ops.MaxTenants, flagval.Off)

	cmd.RunE = app.run(func(ctx context.Context, cmd *cobra.Command) error {
		s, err := app.openOpsStore(ctx, db)
		if err != nil {
			return err
		}
		defer s.close(ctx)
		return printStats(ctx, app.Printer(cmd, asJSON), s.store, s.backend.Describe(), tenants)
	})
	return cmd
}

// printStats prints the gauges of store, described as describe, and the
// tenants with due rows, at most tenants of them, when the store lists
// them: a table and the summary line, or with out.JSON() one document.
func printStats(ctx context.Context, out *output.Printer, store outbox.Store, describe string, tenants int) error {
	st, err := store.Stats(ctx)
	if err != nil {
		return err
	}
	ts, listed, err := ops.Tenants(ctx, store, tenants)
	if err != nil {
		return err
	}
	xa, told, err := ops.XIDAhead(ctx, store)
	if err != nil {
		return err
	}
	hidden, err := ops.RowSecurityLine(ctx, store)
	if err != nil {
		return err
	}
	if out.JSON() {
		doc := ops.NewStatsDocument(st)
		if listed {
			doc.Tenants = ops.NewTenantDocuments(ts)
		}
		if told {
			doc.XIDAhead = ops.NewXIDAheadDocument(xa)
		}
		doc.RowSecurityMayHideRows = hidden != ""
		return out.Document(doc)
	}
	_ = out.Line("stats: %s", describe)
	lines := ops.StatsTable(st, xa.BlockedDue)
	if ahead := ops.XIDAheadLines(xa); len(ahead) > 0 {
		lines = append(append(lines, ""), ahead...)
	}
	if hidden != "" {
		lines = append(lines, "", hidden)
	}
	if listed {
		lines = append(append(lines, ""), ops.TenantsTable(ts, tenants)...)
	}
	for _, l := range lines {
		if err := out.Line("%s", l); err != nil {
			return err
		}
	}
	return out.Final("%s", ops.StatsSummary(st))
}
