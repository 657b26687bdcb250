package relay

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
)

// logBuffer collects a relay's logs for a test.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

// has reports whether a line at level holds every one of parts.
func (b *logBuffer) has(level string, parts ...string) bool {
	for _, line := range strings.Split(b.String(), "\n") {
		ok := strings.Contains(line, "level="+level)
		for _, p := range parts {
			ok = ok && strings.Contains(line, p)
		}
		if ok {
			return true
		}
	}
	return false
}
