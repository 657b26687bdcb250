package outboxdriver_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

func TestNotMigratedError(t *testing.T) {
	for _, tt := range []struct {
		err  *outboxdriver.NotMigratedError
		want string
	}{
		{&outboxdriver.NotMigratedError{Store: "pgstore", Schema: "shop", Have: 3, Want: 5},
			`pgstore: schema "shop" is at version 3, this release needs 5: run pgstore.Migrate (or ` + "`reliar migrate`)"},
		{&outboxdriver.NotMigratedError{Store: "sqlitestore", Have: 0, Want: 2},
			"sqlitestore: schema is at version 0, this release needs 2: run sqlitestore.Migrate (or `reliar migrate`)"},
	} {
		err := fmt.Errorf("open: %w", tt.err)
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
		if !errors.Is(err, outboxdriver.ErrNotMigrated) {
			t.Errorf("errors.Is(%v, ErrNotMigrated) = false", err)
		}
		var nm *outboxdriver.NotMigratedError
		if !errors.As(err, &nm) || *nm != *tt.err {
			t.Errorf("errors.As = %+v, want %+v", nm, tt.err)
		}
		if !reliar.IsPermanent(err) {
			t.Errorf("%v is not permanent", err)
		}
	}
	if errors.Is(errors.New("other"), outboxdriver.ErrNotMigrated) {
		t.Error("an unrelated error matches ErrNotMigrated")
	}
}
