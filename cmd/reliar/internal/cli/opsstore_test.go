package cli

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

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
		{"postgres behind", &pgstore.ErrNotMigrated{Schema: "s", Have: 1, Want: 2}, "db is at schema version 1, this reliar needs 2: run 'reliar migrate'"},
		{"postgres empty", &pgstore.ErrNotMigrated{Schema: "s", Have: 0, Want: 2}, "db has no outbox table (schema version 0, need 2)"},
		{"sqlite", &sqlitestore.NotMigratedError{Have: 1, Want: 2}, "db is at schema version 1"},
		{"mariadb", &mysqlstore.NotMigratedError{Have: 0, Want: 2}, "db has no outbox table"},
		{"other", other, "connection refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := notMigrated("db", tt.err)
			if !strings.Contains(err.Error(), tt.want) || !errors.Is(err, tt.err) {
				t.Fatalf("notMigrated = %q, want %q wrapping the store's error", err, tt.want)
			}
			var nm *NotMigratedError
			if errors.As(err, &nm) != (tt.err != other) {
				t.Fatalf("errors.As(*NotMigratedError) = %v", nm)
			}
		})
	}
}

// TestStoreLogger keeps the store's warnings out of stderr at the default
// level, and shows them from --log-level info.
func TestStoreLogger(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		level slog.Level
		shown []string
	}{
		{slog.LevelWarn, []string{"broken"}},
		{slog.LevelInfo, []string{"other schemas", "broken"}},
	} {
		var buf bytes.Buffer
		app := &App{log: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: tt.level}))}
		log := app.storeLogger(ctx).With("schema", "s").WithGroup("g")
		log.Warn("other schemas")
		log.Error("broken")
		lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
		if len(lines) != len(tt.shown) {
			t.Fatalf("level %v: logged %q, want %v", tt.level, buf.String(), tt.shown)
		}
		for i, want := range tt.shown {
			if !strings.Contains(lines[i], want) || !strings.Contains(lines[i], "schema=s") {
				t.Fatalf("level %v: line %q, want %q with its attributes", tt.level, lines[i], want)
			}
		}
	}
}
