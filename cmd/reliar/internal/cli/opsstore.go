package cli

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"os"

	"github.com/reliar/reliar/cmd/reliar/internal/exitcode"
	"github.com/reliar/reliar/cmd/reliar/internal/logging"
	"github.com/reliar/reliar/cmd/reliar/internal/storeurl"
	"github.com/reliar/reliar/outbox"
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
		return opsStore{}, storeurl.NotMigrated(backend.Describe(), err)
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
