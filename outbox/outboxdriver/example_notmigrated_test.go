package outboxdriver_test

import (
	"errors"
	"fmt"

	"github.com/reliar/reliar/outbox/outboxdriver"
)

// Every store's New returns the same error for a schema behind it, so one
// check serves them all: errors.Is for the verdict, errors.As for the
// versions. pgstore.ErrNotMigrated and pgstore.NotMigratedError (and the
// other stores' names) are this value and this type.
func ExampleNotMigratedError() {
	// What pgstore.New returns for a schema at version 3 when it needs 5.
	var err error = fmt.Errorf("open the store: %w",
		&outboxdriver.NotMigratedError{Store: "pgstore", Schema: "shop", Have: 3, Want: 5})

	if errors.Is(err, outboxdriver.ErrNotMigrated) {
		var nm *outboxdriver.NotMigratedError
		errors.As(err, &nm)
		fmt.Printf("schema %s at version %d, needs %d\n", nm.Schema, nm.Have, nm.Want)
	}
	fmt.Println(err)
	// Output:
	// schema shop at version 3, needs 5
	// open the store: pgstore: schema "shop" is at version 3, this release needs 5: run pgstore.Migrate (or `reliar migrate`)
}
