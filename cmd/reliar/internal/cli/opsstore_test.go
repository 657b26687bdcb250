package cli

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
)

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
