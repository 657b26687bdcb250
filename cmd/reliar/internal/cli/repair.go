package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/reliar/reliar/cmd/reliar/internal/exitcode"
	"github.com/reliar/reliar/cmd/reliar/internal/flagval"
	"github.com/reliar/reliar/store/pgstore"
)

func newRepairCommand(app *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "repair",
		Short: "Repair outbox rows that the claims cannot take",
		Long: `repair fixes rows of the outbox table that the store's claims cannot take as
they are. Its one subcommand, xids, gives rows restored from another PostgreSQL
cluster a transaction id of this one.`,
		Example: `  reliar repair xids --database-url postgres://app@db/orders --schema billing`,
		Args:    cobra.NoArgs,
		// Runnable, so that an unknown subcommand is bad input rather than
		// a help page.
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newRepairXIDsCommand(app))
	return cmd
}

// xidRepairer is what repair xids needs of the store (pgstore).
type xidRepairer interface {
	XIDAhead(ctx context.Context) (pgstore.XIDAhead, error)
	RepairXIDs(ctx context.Context, batch int) (int64, error)
}

// RepairXIDsDocument is the JSON document of reliar repair xids.
type RepairXIDsDocument struct {
	// PendingAhead and Keys are the pending rows ahead of the counter, and
	// the ordering keys they blocked, before the repair.
	PendingAhead int64 `json:"pending_ahead"`
	Keys         int64 `json:"keys"`
	// Repaired counts the rows given an id of this cluster: those pending
	// rows and the dead rows ahead of the counter.
	Repaired int64 `json:"repaired"`
}

func newRepairXIDsCommand(app *App) *cobra.Command {
	var (
		db     dbFlags
		batch  int
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "xids",
		Short: "Give rows restored from another cluster a transaction id of this one",
		Long: `xids repairs the rows of a PostgreSQL outbox table whose transaction id (the xid
column) is ahead of the database's counter: rows restored from a dump of
another cluster, or copied by logical replication, with their xid. A per-key
claim (reliar relay --ordering per-key) takes a keyed row only once its xid is
older than every running transaction, so such a row, and every later row of
its key, never publishes until the counter catches up; the relay warns about
them, exports reliar_outbox_xid_ahead_rows, and reliar stats and reliar doctor
report them.

xids gives every unpublished row ahead of the counter (pending, and dead so
that a later dead retry does not bring the block back) the id of a transaction
of this database, in statements of at most --batch-size rows, each its own
transaction. Nothing else changes: within a key the rows keep their order. It
is idempotent and safe while relays run; they take the rows once the repair's
transactions end.

The last line on stdout is
  repair xids: pending_ahead=N keys=N repaired=N
(pending_ahead and keys as found before the repair). With --json, one object
{"pending_ahead","keys","repaired"}.

Exit status: 0, 1 when the database fails or its schema is not migrated, 2 on
bad input (a database other than PostgreSQL among them).`,
		Example: `  reliar repair xids --database-url postgres://app@db:5432/orders --schema billing
  reliar repair xids --database-url postgres://app@db:5432/orders --json`,
		Args: cobra.NoArgs,
	}
	addDBFlags(cmd, &db, true)
	flagval.Int(cmd.Flags(), &batch, "batch-size", pgstore.DefaultRepairBatch, "most rows each statement changes", 0)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as one JSON document")

	cmd.RunE = app.run(func(ctx context.Context, cmd *cobra.Command) error {
		loc, err := app.Location(db.url)
		if err != nil {
			return err
		}
		if loc.Driver() != "postgres" {
			return exitcode.UsageError(fmt.Errorf("repair xids repairs PostgreSQL outbox tables only, not %s (%s): other databases keep no transaction id in their rows", loc.Driver(), loc))
		}
		s, err := app.openOpsStore(ctx, db)
		if err != nil {
			return err
		}
		defer s.close(ctx)
		r, ok := s.store.(xidRepairer)
		if !ok {
			return fmt.Errorf("repair xids: the %s store cannot repair transaction ids", loc.Driver())
		}
		before, err := r.XIDAhead(ctx)
		if err != nil {
			return err
		}
		n, err := r.RepairXIDs(ctx, batch)
		if err != nil {
			return fmt.Errorf("repair xids: %d rows repaired before: %w", n, err)
		}
		app.Log().Info("repaired rows ahead of the xid counter", "repaired", n, "pending_before", before.Rows, "keys", before.Keys)
		doc := RepairXIDsDocument{PendingAhead: before.Rows, Keys: before.Keys, Repaired: n}
		out := app.Printer(cmd, asJSON)
		if asJSON {
			return out.Document(doc)
		}
		_ = out.Line("repair xids: %s", s.backend.Describe())
		return out.Final("repair xids: pending_ahead=%d keys=%d repaired=%d", doc.PendingAhead, doc.Keys, doc.Repaired)
	})
	return cmd
}
