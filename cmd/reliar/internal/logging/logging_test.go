package logging

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
)

func TestParseLevel(t *testing.T) {
	tests := []struct {
		in      string
		want    slog.Level
		wantErr bool
	}{
		{"debug", slog.LevelDebug, false},
		{"INFO", slog.LevelInfo, false},
		{"warn", slog.LevelWarn, false},
		{" warning ", slog.LevelWarn, false},
		{"error", slog.LevelError, false},
		{"loud", 0, true},
		{"", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseLevel(tt.in)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Fatalf("ParseLevel(%q) = %v, %v; want %v, error %t", tt.in, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestNew(t *testing.T) {
	var buf bytes.Buffer
	l, err := New(&buf, "warn", "text")
	if err != nil {
		t.Fatal(err)
	}
	l.Info("hidden")
	l.Warn("shown", "n", 1)
	if out := buf.String(); strings.Contains(out, "hidden") || !strings.Contains(out, "msg=shown n=1") {
		t.Fatalf("text output %q", out)
	}

	buf.Reset()
	l, err = New(&buf, "debug", "json")
	if err != nil {
		t.Fatal(err)
	}
	l.Debug("d")
	var rec map[string]any
	if err := json.Unmarshal(buf.Bytes(), &rec); err != nil || rec["msg"] != "d" {
		t.Fatalf("json output %q: %v", buf.String(), err)
	}

	if _, err := New(&buf, "nope", "text"); err == nil {
		t.Fatal("want a level error")
	}
	if _, err := New(&buf, "warn", "xml"); err == nil {
		t.Fatal("want a format error")
	}
}
