// Package logging builds the CLI's log/slog logger: text or JSON records on
// stderr, at a level chosen with --log-level (warn by default, so that an
// operator command's stderr stays quiet unless something is wrong), with
// every record redacted value by value before it is formatted.
package logging

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/reliar/reliar/cmd/reliar/internal/redact"
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

// CheckFormat accepts the log formats: text (or empty) and json.
func CheckFormat(format string) error {
	switch strings.ToLower(format) {
	case "", "text", "json":
		return nil
	}
	return fmt.Errorf("unknown log format %q (want text or json)", format)
}

// IsJSON reports whether format is the JSON format.
func IsJSON(format string) bool { return strings.EqualFold(format, "json") }

// New returns a logger writing to w at level, as "text" or "json" records.
// Every record goes through r's redaction before it is formatted (r may be
// nil: then only the secrets redact.String recognises are masked), so w
// receives the records as the handler wrote them and a JSON record always
// parses.
func New(w io.Writer, level, format string, r *redact.Redactor) (*slog.Logger, error) {
	lvl, err := ParseLevel(level)
	if err != nil {
		return nil, err
	}
	if err := CheckFormat(format); err != nil {
		return nil, err
	}
	opts := &slog.HandlerOptions{Level: lvl}
	var h slog.Handler = slog.NewTextHandler(w, opts)
	if IsJSON(format) {
		h = slog.NewJSONHandler(w, opts)
	}
	return slog.New(r.Handler(h)), nil
}

// Floor returns a logger that drops log's records below min.
func Floor(log *slog.Logger, min slog.Level) *slog.Logger {
	return slog.New(floor{Handler: log.Handler(), min: min})
}

// floor drops the records of its handler below a minimum level.
type floor struct {
	slog.Handler
	min slog.Level
}

func (h floor) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h floor) WithAttrs(attrs []slog.Attr) slog.Handler {
	return floor{h.Handler.WithAttrs(attrs), h.min}
}

func (h floor) WithGroup(name string) slog.Handler {
	return floor{h.Handler.WithGroup(name), h.min}
}
