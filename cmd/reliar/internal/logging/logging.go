// Package logging builds the CLI's log/slog logger: text or JSON records on
// stderr, at a level chosen with --log-level (warn by default, so that an
// operator command's stderr stays quiet unless something is wrong).
package logging

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// DefaultLevel is the level of operator commands unless --log-level says
// otherwise.
const DefaultLevel = "warn"

// ParseLevel parses debug, info, warn (or warning) and error, in any case.
func ParseLevel(s string) (slog.Level, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "debug":
		return slog.LevelDebug, nil
	case "info":
		return slog.LevelInfo, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("unknown log level %q (want debug, info, warn or error)", s)
}

// New returns a logger writing to w at level, as "text" or "json" records.
func New(w io.Writer, level, format string) (*slog.Logger, error) {
	lvl, err := ParseLevel(level)
	if err != nil {
		return nil, err
	}
	opts := &slog.HandlerOptions{Level: lvl}
	switch strings.ToLower(format) {
	case "", "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("unknown log format %q (want text or json)", format)
}
