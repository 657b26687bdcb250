package outboxsql

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"

	"github.com/reliar/reliar/outbox/outboxdriver"
)

// Schema is what a SQL store's New and Migrate share about its migrations:
// where they are, which version the store needs and how to read the version
// a database has.
type Schema struct {
	// Store names the store, such as "sqlitestore": it prefixes messages
	// and fills NotMigratedError.Store.
	Store string
	// Invalid is the store's ErrInvalidOption, wrapped by the error of a
	// nil handle.
	Invalid error
	// Files holds the migrations, NNNN_name.up.sql and .down.sql, at its
	// root.
	Files fs.FS
	// Version is the schema version the store needs (its SchemaVersion).
	Version int
	// Exists is the dialect's query that counts the tables named by its one
	// parameter (see [AppliedVersion]).
	Exists string
	// Wrap turns a driver error into the store's error of operation op.
	Wrap func(op string, err error) error
}

// Prepare is the prologue of a store's Migrate: it refuses a nil handle,
// runs validate (the store's options, so that New and Migrate take one
// option list) and reads the up migrations in version order.
func (s Schema) Prepare(db *sql.DB, validate func() error) ([]Migration, error) {
	if db == nil {
		return nil, fmt.Errorf("%w: nil *sql.DB", s.Invalid)
	}
	if err := validate(); err != nil {
		return nil, err
	}
	ms, err := LoadMigrations(s.Files)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.Store, err)
	}
	return ms, nil
}

// Applied returns the latest applied migration, 0 when the version table is
// missing or empty; a failure is the store's error of "schema version".
func (s Schema) Applied(ctx context.Context, q RowQuerier) (int, error) {
	v, err := AppliedVersion(ctx, q, s.Exists)
	if err != nil {
		return 0, s.Wrap("schema version", err)
	}
	return v, nil
}

// Check is New's schema check: a *outboxdriver.NotMigratedError when the
// database is behind Version, the failure to read the version (prefixed
// "<store>: new:") when there is one, else nil.
func (s Schema) Check(ctx context.Context, q RowQuerier) error {
	have, err := s.Applied(ctx, q)
	if err != nil {
		return fmt.Errorf("%s: new: %w", s.Store, err)
	}
	return Behind(s.Store, "", have, s.Version)
}

// Behind returns the *outboxdriver.NotMigratedError of store (and schema,
// for a store that has one) when have is below want, else nil.
func Behind(store, schema string, have, want int) error {
	if have < want {
		return &outboxdriver.NotMigratedError{Store: store, Schema: schema, Have: have, Want: want}
	}
	return nil
}
