// Package quietlog is the logger the benchmark gives every system: warnings
// and errors on stderr, nothing below, so that stdout stays the report.
package quietlog

import (
	"log/slog"
	"os"
)

// New returns a logger that writes warnings and errors to stderr.
func New() *slog.Logger { return AtLevel(slog.LevelWarn) }

// AtLevel returns a logger that writes records of level and above to
// stderr.
func AtLevel(level slog.Level) *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
}
