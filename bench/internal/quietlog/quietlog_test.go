package quietlog

import (
	"context"
	"log/slog"
	"testing"
)

func TestLevels(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		l     *slog.Logger
		level slog.Level
		want  bool
	}{
		{"New drops info", New(), slog.LevelInfo, false},
		{"New keeps warnings", New(), slog.LevelWarn, true},
		{"AtLevel(error) drops warnings", AtLevel(slog.LevelError), slog.LevelWarn, false},
		{"AtLevel(error) keeps errors", AtLevel(slog.LevelError), slog.LevelError, true},
	} {
		if got := tc.l.Enabled(ctx, tc.level); got != tc.want {
			t.Errorf("%s: Enabled(%v) = %v", tc.name, tc.level, got)
		}
	}
}
