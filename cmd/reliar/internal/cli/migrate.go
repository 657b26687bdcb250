package cli

import (
	"context"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/reliar/reliar/cmd/reliar/internal/flagval"
	"github.com/reliar/reliar/cmd/reliar/internal/storeurl"
)

func newMigrateCommand(app *App) *cobra.Command {
	var (
		db       dbFlags
		printSQL bool
		asJSON   bool
		timeout  time.Duration
	)
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Create or upgrade the outbox table, or print its SQL",
		Long: `migrate applies the migrations of the store named by the URL's scheme
(postgres:// or postgresql://, sqlite://path or sqlite:///absolute/path,
mysql://) and reports the schema version before and after. It is idempotent and
safe to run from several processes at once.

--print-sql prints the SQL instead, without connecting, for teams that apply
migrations with their own tool (goose, golang-migrate, Atlas). That tool must
also record the version in the reliar_migrations table, as these files do on
PostgreSQL and MariaDB.

The last line on stdout is
  migrate: <store> at version V (was W)`,
		Example: `  reliar migrate --database-url postgres://app@db:5432/orders --schema billing
  reliar migrate --database-url sqlite://orders.db
  reliar migrate --database-url postgres://localhost/orders --print-sql > outbox.sql`,
		Args: cobra.NoArgs,
	}
	addDBFlags(cmd, &db, true)
	f := cmd.Flags()
	f.BoolVar(&printSQL, "print-sql", false, "print the migrations' SQL instead of applying it")
	f.BoolVar(&asJSON, "json", false, "print the result as one JSON document")
	flagval.Duration(f, &timeout, "timeout", time.Minute, "longest time to connect and migrate", 0)

	cmd.RunE = app.run(func(ctx context.Context, cmd *cobra.Command) error {
		loc, err := app.Location(db.url)
		if err != nil {
			return err
		}
		out := app.Printer(cmd, asJSON)
		opts := storeurl.Options{Schema: db.schema, Logger: app.Log()}
		if printSQL {
			files, err := loc.MigrationSQL(opts)
			if err != nil {
				return err
			}
			if asJSON {
				return out.Document(map[string]any{"store": loc.Driver(), "files": files})
			}
			var b strings.Builder
			for _, f := range files {
				b.WriteString("-- " + f.Name + "\n" + strings.TrimRight(f.SQL, "\n") + "\n\n")
			}
			return out.Text(strings.TrimRight(b.String(), "\n"))
		}
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		backend, err := loc.Open(ctx, opts)
		if err != nil {
			return err
		}
		defer backend.Close(context.WithoutCancel(ctx))
		m, err := backend.Migrate(ctx)
		if err != nil {
			return err
		}
		app.Log().Info("migrated", "store", backend.Describe(), "from", m.From, "to", m.To)
		if asJSON {
			return out.Document(migrateJSON{Store: backend.Describe(), Migration: m, Applied: m.To - m.From})
		}
		return out.Final("migrate: %s at version %d (was %d)", backend.Describe(), m.To, m.From)
	})
	return cmd
}

// migrateJSON is migrate's --json document.
type migrateJSON struct {
	Store string `json:"store"`
	storeurl.Migration
	Applied int `json:"applied"`
}
