package cli

import (
	"github.com/spf13/cobra"

	"github.com/reliar/reliar/cmd/reliar/internal/flagval"
)

// dbFlags are the flags of every command that opens an outbox store.
type dbFlags struct {
	url    string
	schema string
}

// addDBFlags adds --database-url and, with schema, --schema to cmd.
func addDBFlags(cmd *cobra.Command, f *dbFlags, schema bool) {
	cmd.Flags().StringVar(&f.url, "database-url", "",
		"database URL: postgres://…, sqlite://path (sqlite:///absolute/path) or mysql://… (env RELIAR_DATABASE_URL)")
	if schema {
		flagval.Schema(cmd.Flags(), &f.schema, "schema", `PostgreSQL schema of the outbox table, a plain identifier (default "public")`)
	}
}
