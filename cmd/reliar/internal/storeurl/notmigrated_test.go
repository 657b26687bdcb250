package storeurl

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/reliar/reliar/outbox/outboxdriver"
	"github.com/reliar/reliar/store/mysqlstore"
	"github.com/reliar/reliar/store/pgstore"
	"github.com/reliar/reliar/store/sqlitestore"
)

func TestNotMigrated(t *testing.T) {
	other := errors.New("connection refused")
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"postgres behind", &pgstore.NotMigratedError{Store: "pgstore", Schema: "s", Have: 1, Want: 2}, "db is at schema version 1, this reliar needs 2: run 'reliar migrate'"},
		{"postgres empty", &pgstore.NotMigratedError{Store: "pgstore", Schema: "s", Have: 0, Want: 2}, "db has no outbox table (schema version 0, need 2)"},
		{"sqlite", fmt.Errorf("store: %w", &sqlitestore.NotMigratedError{Store: "sqlitestore", Have: 1, Want: 2}), "db is at schema version 1"},
		{"mariadb", &mysqlstore.NotMigratedError{Store: "mysqlstore", Have: 0, Want: 2}, "db has no outbox table"},
		{"other", other, "connection refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := NotMigrated("db", tt.err)
			if !strings.Contains(err.Error(), tt.want) || !errors.Is(err, tt.err) {
				t.Fatalf("notMigrated = %q, want %q wrapping the store's error", err, tt.want)
			}
			var nm *NotMigratedError
			if errors.As(err, &nm) != (tt.err != other) {
				t.Fatalf("errors.As(*NotMigratedError) = %v", nm)
			}
			if tt.err == other {
				return
			}
			// The CLI's words, never the library's: an operator runs
			// reliar migrate, not a Go function.
			if !errors.Is(err, outboxdriver.ErrNotMigrated) || strings.Contains(err.Error(), ".Migrate") {
				t.Fatalf("NotMigrated = %q: want errors.Is ErrNotMigrated and no Go function named", err)
			}
		})
	}
}
