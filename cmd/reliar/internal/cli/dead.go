package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/reliar/reliar/cmd/reliar/internal/exitcode"
	"github.com/reliar/reliar/cmd/reliar/internal/flagval"
	"github.com/reliar/reliar/cmd/reliar/internal/ops"
	"github.com/reliar/reliar/outbox"
)

func newDeadCommand(app *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "dead",
		Short: "List, retry or delete dead-lettered rows",
		Long: `dead works on the rows that went dead (a permanent failure, too many attempts or
lapsed claims, expiry, or an undecodable row): list shows them a page at a time
(never their payloads), show prints one payload (capped), retry makes them due
again, purge deletes them. They work through the store's dead-letter interface,
on PostgreSQL, SQLite and MariaDB alike.`,
		Example: `  reliar dead list --database-url postgres://app@db/orders --type orders.placed
  reliar dead retry --database-url postgres://app@db/orders 0190a4c2-7b1e-7cde-8f00-1234567890ab`,
		Args: cobra.NoArgs,
		// Runnable, so that an unknown subcommand is bad input rather than
		// a help page.
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newDeadListCommand(app), newDeadShowCommand(app), newDeadActionCommand(app, ops.Retry), newDeadActionCommand(app, ops.Delete))
	return cmd
}

// deadFilters are the flags that select dead rows, shared by dead list and
// --all-matching.
type deadFilters struct {
	messageType string
	tenant      string
	before      ops.Before
	after       int64
	limit       int
}

// The page size of dead list and the batch size of --all-matching: the
// store's default and cap.
const (
	deadLimitDefault = 100
	deadLimitMax     = 1000
)

func addDeadFilters(cmd *cobra.Command, f *deadFilters, limitUsage string) {
	fl := cmd.Flags()
	fl.StringVar(&f.messageType, "type", "", "only rows of this message type")
	fl.StringVar(&f.tenant, "tenant", "", "only rows of this tenant id")
	fl.Var(&f.before, "before", "only rows that went dead before this time: RFC 3339, a date, or a duration ago (24h, 7d)")
	fl.Int64Var(&f.after, "after", 0, "only rows with a larger sequence (the cursor a previous page printed)")
	flagval.Int(fl, &f.limit, "limit", deadLimitDefault, limitUsage, deadLimitMax)
}

// query validates the filters and returns the store's query.
func (f *deadFilters) query() (outbox.DeadQuery, error) {
	switch {
	case f.after < 0:
		return outbox.DeadQuery{}, exitcode.UsageError(fmt.Errorf("--after must not be negative, not %d", f.after))
	}
	return outbox.DeadQuery{
		MessageType:   f.messageType,
		TenantID:      f.tenant,
		DeadBefore:    f.before.Time(),
		AfterSequence: f.after,
		Limit:         f.limit,
	}, nil
}

// describe says in words which rows the filters select.
func (f *deadFilters) describe() string {
	var parts []string
	if f.messageType != "" {
		parts = append(parts, fmt.Sprintf("of type %q", f.messageType))
	}
	if f.tenant != "" {
		parts = append(parts, fmt.Sprintf("of tenant %q", f.tenant))
	}
	if !f.before.Time().IsZero() {
		parts = append(parts, "dead before "+f.before.Time().UTC().Format("2006-01-02T15:04:05Z"))
	}
	if f.after > 0 {
		parts = append(parts, fmt.Sprintf("after sequence %d", f.after))
	}
	if len(parts) == 0 {
		return "every dead row"
	}
	return "every dead row " + strings.Join(parts, ", ")
}

func newDeadListCommand(app *App) *cobra.Command {
	var (
		db      dbFlags
		filters deadFilters
		asJSON  bool
	)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List dead rows, a page at a time",
		Long: `list prints one page of dead rows in sequence order, filtered by message type,
tenant and the time they went dead. Rows that cannot be decoded are listed apart,
as poisoned. When the page is full, the last line gives the --after value of the
next page.

The last line on stdout is
  dead list: N records, P poisoned; end of list
or
  dead list: N records, P poisoned; more after sequence S (--after S)
With --json, one object: {"records":[{"id","sequence","message_type","tenant_id",
"dead_reason","attempts","last_error","dead_at","payload_size"}…],"poisoned":[{"id",
"sequence","error"}…],"next_after_sequence":S or null}.

The listing never reads payloads (reliar dead show prints one) and reads at most
2 KiB of each last_error and 8 KiB of each metadata and headers document, so its
memory stays small whatever the rows hold.`,
		Example: `  reliar dead list --database-url postgres://app@db/orders --type orders.placed --before 24h
  reliar dead list --database-url sqlite://orders.db --limit 500 --after 1200 --json`,
		Args: cobra.NoArgs,
	}
	addDBFlags(cmd, &db, true)
	addDeadFilters(cmd, &filters, "rows per page, 1 to 1000")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as one JSON document")

	cmd.RunE = app.run(func(ctx context.Context, cmd *cobra.Command) error {
		q, err := filters.query()
		if err != nil {
			return err
		}
		s, err := app.openOpsStore(ctx, db)
		if err != nil {
			return err
		}
		defer s.close(ctx)
		page, err := s.store.ListDead(ctx, q)
		if err != nil {
			return err
		}
		out := app.Printer(cmd, asJSON)
		if asJSON {
			return out.Document(ops.NewDeadListDocument(page))
		}
		for _, l := range ops.DeadTable(page) {
			if err := out.Line("%s", l); err != nil {
				return err
			}
		}
		return out.Final("%s", ops.DeadListSummary(page))
	})
	return cmd
}

// deadActionJSON is the --json document of dead retry and dead purge.
type deadActionJSON struct {
	Action      string `json:"action"`
	AllMatching bool   `json:"all_matching"`
	// Asked is the number of distinct ids named, or of matching rows found.
	Asked int64 `json:"asked"`
	// Done is the number of rows retried or deleted.
	Done    int64 `json:"done"`
	Batches int   `json:"batches"`
}

// ErrNotAllDead is matched (with errors.Is) when some ids named to dead retry
// or dead purge were not dead rows.
var ErrNotAllDead = errors.New("not every id named a dead row")

func newDeadActionCommand(app *App, act ops.Action) *cobra.Command {
	var (
		db          dbFlags
		filters     deadFilters
		allMatching bool
		yes         bool
		asJSON      bool
	)
	short := map[ops.Action]string{
		ops.Retry:  "Make dead rows due again, by id or every row matching filters",
		ops.Delete: "Delete dead rows, by id or every row matching filters",
	}[act]
	effect := map[ops.Action]string{
		ops.Retry: `retry makes dead rows due again: their attempts and lapsed claims start from
zero, last_error is kept, and an expires_at already past is cleared.`,
		ops.Delete: `purge deletes dead rows for good.`,
	}[act]
	cmd := &cobra.Command{
		Use:   act.String() + " [ID...]",
		Short: short,
		Long: effect + `

It names the rows by id, or with --all-matching selects every dead row matching
the filters of 'dead list' (no filter: every dead row), working through them a
page (--limit) at a time. It touches only dead rows: a pending, leased or
published row is left alone.

On a terminal it asks for confirmation unless --yes is given; from a script
(stdin not a terminal) --all-matching needs --yes, while ids proceed without it.

The last line on stdout is
  dead ` + act.String() + `: ` + act.Past() + ` N of M
where M is the number of distinct ids named or of matching rows found.

Exit status: 0 when every row was ` + act.Past() + `; 1 when some named ids were not
dead rows (unknown, pending, leased or published: they are left alone, the
others are ` + act.Past() + `, and stdout still says how many), when the confirmation
was declined, or when the database failed; 2 on bad input.`,
		Example: fmt.Sprintf(`  reliar dead %[1]s --database-url postgres://app@db/orders 0190a4c2-7b1e-7cde-8f00-1234567890ab
  reliar dead %[1]s --database-url postgres://app@db/orders --all-matching --type orders.placed --before 2h --yes`, act),
	}
	addDBFlags(cmd, &db, true)
	addDeadFilters(cmd, &filters, "rows per batch with --all-matching, 1 to 1000")
	f := cmd.Flags()
	f.BoolVar(&allMatching, "all-matching", false, "act on every dead row matching the filters instead of named ids")
	f.BoolVar(&yes, "yes", false, "do not ask for confirmation")
	f.BoolVar(&asJSON, "json", false, "print the result as one JSON document")

	cmd.RunE = app.run(func(ctx context.Context, cmd *cobra.Command) error {
		args := cmd.Flags().Args()
		filtered := filtersChanged(cmd)
		switch {
		case allMatching && len(args) > 0:
			return exitcode.UsageError(errors.New("give ids or --all-matching, not both"))
		case !allMatching && len(args) == 0:
			return exitcode.UsageError(errors.New("name the dead rows by id, or select them with --all-matching"))
		case !allMatching && filtered != "":
			return exitcode.UsageError(fmt.Errorf("--%s selects rows with --all-matching only", filtered))
		}
		q, err := filters.query()
		if err != nil {
			return err
		}
		ids, err := ops.ParseIDs(args)
		if err != nil {
			return exitcode.UsageError(err)
		}
		question := fmt.Sprintf("%s %d dead rows?", strings.ToUpper(act.String()[:1])+act.String()[1:], len(ids))
		if allMatching {
			question = fmt.Sprintf("%s %s?", strings.ToUpper(act.String()[:1])+act.String()[1:], filters.describe())
		}
		if !yes {
			if err := app.confirm(cmd, question, allMatching); err != nil {
				return err
			}
		}
		s, err := app.openOpsStore(ctx, db)
		if err != nil {
			return err
		}
		defer s.close(ctx)
		var tally ops.Tally
		if allMatching {
			tally, err = ops.ApplyMatching(ctx, s.store, act, q, func(t ops.Tally) {
				app.Log().Info("dead "+act.String(), "rows", t.Asked, act.Past(), t.Done)
			})
		} else {
			tally, err = ops.ApplyIDs(ctx, s.store, act, ids)
		}
		if err != nil {
			return err
		}
		out := app.Printer(cmd, asJSON)
		if asJSON {
			err = out.Document(deadActionJSON{Action: act.String(), AllMatching: allMatching, Asked: tally.Asked, Done: tally.Done, Batches: tally.Batches})
		} else {
			err = out.Final("dead %s: %s %d of %d", act, act.Past(), tally.Done, tally.Asked)
		}
		if err != nil {
			return err
		}
		if !allMatching && tally.Done < tally.Asked {
			return exitcode.FailureError(fmt.Errorf("%w: %d of %d ids were not dead rows (unknown, pending, leased or published) and were left alone",
				ErrNotAllDead, tally.Asked-tally.Done, tally.Asked))
		}
		return nil
	})
	return cmd
}

// filtersChanged returns the name of a filter flag that was set, or "".
// --limit is not a filter: it sizes the batches of --all-matching.
func filtersChanged(cmd *cobra.Command) string {
	for _, name := range []string{"type", "tenant", "before", "after"} {
		if cmd.Flags().Changed(name) {
			return name
		}
	}
	return ""
}

// confirm asks question on a terminal. Without a terminal it lets a named
// set of ids proceed, and refuses a bulk operation (exit status 2), which
// needs --yes.
func (a *App) confirm(cmd *cobra.Command, question string, bulk bool) error {
	in := cmd.InOrStdin()
	if !isTerminal(in) {
		if bulk {
			return exitcode.UsageError(errors.New("stdin is not a terminal to confirm on: add --yes to act on every matching dead row"))
		}
		return nil
	}
	ok, err := ops.Confirm(in, a.stderr, question)
	if err != nil {
		return err
	}
	if !ok {
		return exitcode.FailureError(errors.New("not confirmed: nothing was done"))
	}
	return nil
}

// isTerminal reports whether r is a terminal.
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
