package storeurl

import (
	"errors"
	"fmt"

	"github.com/reliar/reliar/outbox/outboxdriver"
)

// NotMigratedError reports a database whose outbox schema is older than
// this reliar needs, or absent, in the words of the CLI: what to run is
// `reliar migrate`, not a Go function.
type NotMigratedError struct {
	// Store names the database, secrets redacted.
	Store string
	// Have and Want are the schema versions found and needed.
	Have, Want int
	// Err is the store's error (an *outboxdriver.NotMigratedError).
	Err error
}

func (e *NotMigratedError) Error() string {
	if e.Have == 0 {
		return fmt.Sprintf("%s has no outbox table (schema version 0, need %d): check --database-url and --schema, or run 'reliar migrate' with them", e.Store, e.Want)
	}
	return fmt.Sprintf("%s is at schema version %d, this reliar needs %d: run 'reliar migrate' with the same --database-url and --schema", e.Store, e.Have, e.Want)
}

// Unwrap returns the store's error, so that errors.Is(err,
// outboxdriver.ErrNotMigrated) holds.
func (e *NotMigratedError) Unwrap() error { return e.Err }

// NotMigrated turns a store's not-migrated error (every store returns an
// *outboxdriver.NotMigratedError) into a *NotMigratedError naming store,
// and returns other errors as they are.
func NotMigrated(store string, err error) error {
	var nm *outboxdriver.NotMigratedError
	if errors.As(err, &nm) {
		return &NotMigratedError{Store: store, Have: nm.Have, Want: nm.Want, Err: err}
	}
	return err
}
