package pgstore

import (
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// ErrNotMigrated is matched (with errors.Is) by a *NotMigratedError. It is
// outboxdriver.ErrNotMigrated, the one value every store's not-migrated
// error matches.
var ErrNotMigrated = outboxdriver.ErrNotMigrated

// NotMigratedError is returned by New when the schema is below
// SchemaVersion (Store "pgstore", Schema the configured schema); read its
// versions with errors.As. Run [Migrate] (or `reliar migrate`). It is the
// one type every store's New returns for a schema behind it.
type NotMigratedError = outboxdriver.NotMigratedError

// ErrNotPgxDriver is returned by EnqueueSQL and InboxSQL.MarkProcessed for a
// transaction that does not come from pgx's database/sql driver
// (github.com/jackc/pgx/v5/stdlib).
var ErrNotPgxDriver = errors.New("pgstore: EnqueueSQL and InboxSQL need a *sql.Tx of the pgx driver (github.com/jackc/pgx/v5/stdlib)")

// ErrInvalidOption is wrapped by every error an Option returns.
var ErrInvalidOption = errors.New("pgstore: invalid option")

// permanentStates are SQLSTATEs and SQLSTATE classes (two characters) that
// fail the same way when retried.
var permanentStates = []string{
	"42",    // syntax error or access rule violation: undefined table, column, function; 42501 insufficient privilege
	"3F000", // invalid schema name
	"3D000", // invalid catalog name (no such database)
	"28",    // invalid authorization specification
	"0A000", // feature not supported
}

// transientStates are SQLSTATEs and classes worth retrying. Anything not
// permanent is treated as transient; the list documents the cases we expect.
var transientStates = []string{
	"08",    // connection exception
	"40001", // serialization failure
	"40P01", // deadlock detected
	"55P03", // lock not available
	"57014", // query canceled (statement_timeout)
	"57P0",  // admin shutdown, crash shutdown, cannot connect now, database dropped
	"53",    // insufficient resources
}

// classify returns the failure kind of a driver error.
func classify(err error) reliar.FailureKind {
	if err == nil {
		return reliar.FailureTransient
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		if matchState(pgErr.Code, permanentStates) {
			return reliar.FailurePermanent
		}
		return reliar.FailureTransient
	}
	// Context deadlines, lost connections and everything unknown: transient.
	return reliar.KindOf(err)
}

func matchState(code string, states []string) bool {
	for _, s := range states {
		if strings.HasPrefix(code, s) {
			return true
		}
	}
	return false
}

// wrapErr is the one place where driver errors become store errors: it adds
// the operation to the message and wraps permanent ones with
// reliar.Permanent. The *pgconn.PgError stays reachable with errors.As.
func wrapErr(op string, err error) error {
	if err == nil {
		return nil
	}
	wrapped := fmt.Errorf("pgstore: %s: %w", op, err)
	if classify(err) == reliar.FailurePermanent && !reliar.IsPermanent(err) {
		return reliar.Permanent(wrapped)
	}
	return wrapped
}

// isUndefined reports an error for a missing schema or table.
func isUndefined(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "42P01" || pgErr.Code == "3F000")
}
