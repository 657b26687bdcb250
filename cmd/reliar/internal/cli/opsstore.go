package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"

	"github.com/reliar/reliar/cmd/reliar/internal/exitcode"
	"github.com/reliar/reliar/cmd/reliar/internal/logging"
	"github.com/reliar/reliar/cmd/reliar/internal/storeurl"
	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/store/mysqlstore"
	"github.com/reliar/reliar/store/pgstore"
	"github.com/reliar/reliar/store/sqlitestore"
)

// opsStore is the store an operator command works on, and its backend, which
// the command closes.
type opsStore struct {
	backend storeurl.Backend
	store   outbox.Store
}

// close releases the backend's connections.
func (s opsStore) close(ctx context.Context) {
	_ = s.backend.Close(context.WithoutCancel(ctx))
}

// openOpsStore opens the outbox store of an existing, migrated database for
// an operator command. A SQLite file that does not exist is bad input (exit
// status 2) rather than a new, empty database; a schema that is not migrated
// fails (exit status 1) with a message that says to run reliar migrate.
func (a *App) openOpsStore(ctx context.Context, db dbFlags) (opsStore, error) {
	loc, err := a.Location(db.url)
	if err != nil {
		return opsStore{}, err
	}
	if loc.Driver() == "sqlite" {
		if err := sqliteFileExists(db.url); err != nil {
			return opsStore{}, err
		}
	}
	backend, err := loc.Open(ctx, storeurl.Options{Schema: db.schema, Logger: a.storeLogger(ctx), MaxConns: 2})
	if err != nil {
		return opsStore{}, err
	}
	store, err := backend.Store(ctx)
	if err != nil {
		defer backend.Close(context.WithoutCancel(ctx))
		return opsStore{}, notMigrated(backend.Describe(), err)
	}
	return opsStore{backend: backend, store: store}, nil
}

// sqliteFileExists refuses a sqlite:// URL whose file is missing, which the
// driver would otherwise create empty.
func sqliteFileExists(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return exitcode.UsageError(err)
	}
	path := u.Opaque
	if path == "" {
		path = u.Host + u.Path
	}
	if _, err := os.Stat(path); err != nil {
		return exitcode.UsageError(fmt.Errorf("no SQLite database at %s: %w", path, err))
	}
	return nil
}

// NotMigratedError reports a database whose outbox schema is older than
// this reliar needs, or absent.
type NotMigratedError struct {
	// Store names the database, secrets redacted.
	Store string
	// Have and Want are the schema versions found and needed.
	Have, Want int
	// Err is the store's error.
	Err error
}

func (e *NotMigratedError) Error() string {
	if e.Have == 0 {
		return fmt.Sprintf("%s has no outbox table (schema version 0, need %d): check --database-url and --schema, or run 'reliar migrate' with them", e.Store, e.Want)
	}
	return fmt.Sprintf("%s is at schema version %d, this reliar needs %d: run 'reliar migrate' with the same --database-url and --schema", e.Store, e.Have, e.Want)
}

// Unwrap returns the store's error.
func (e *NotMigratedError) Unwrap() error { return e.Err }

// notMigrated turns the stores' not-migrated errors into *NotMigratedError
// and returns other errors as they are.
func notMigrated(store string, err error) error {
	var (
		pg    *pgstore.ErrNotMigrated
		lite  *sqlitestore.NotMigratedError
		maria *mysqlstore.NotMigratedError
	)
	switch {
	case errors.As(err, &pg):
		return &NotMigratedError{Store: store, Have: pg.Have, Want: pg.Want, Err: err}
	case errors.As(err, &lite):
		return &NotMigratedError{Store: store, Have: lite.Have, Want: lite.Want, Err: err}
	case errors.As(err, &maria):
		return &NotMigratedError{Store: store, Have: maria.Have, Want: maria.Want, Err: err}
	}
	return err
}

// storeLogger is the logger handed to the store of an operator command. At
// the default level it keeps only the store's errors: its start-up warnings
// (such as other schemas holding an outbox table) concern dispatchers, and
// would otherwise be all an operator command writes to stderr. --log-level
// info or debug shows everything.
func (a *App) storeLogger(ctx context.Context) *slog.Logger {
	log := a.Log()
	if log.Enabled(ctx, slog.LevelInfo) {
		return log
	}
	return logging.Floor(log, slog.LevelError)
}
