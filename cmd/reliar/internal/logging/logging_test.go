package logging

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/reliar/reliar/cmd/reliar/internal/redact"
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
	l, err := New(&buf, "warn", "text", nil)
	if err != nil {
		t.Fatal(err)
	}
	l.Info("hidden")
	l.Warn("shown", "n", 1)
	if out := buf.String(); strings.Contains(out, "hidden") || !strings.Contains(out, "msg=shown n=1") {
		t.Fatalf("text output %q", out)
	}

	buf.Reset()
	l, err = New(&buf, "debug", "json", nil)
	if err != nil {
		t.Fatal(err)
	}
	l.Debug("d")
	var rec map[string]any
	if err := json.Unmarshal(buf.Bytes(), &rec); err != nil || rec["msg"] != "d" {
		t.Fatalf("json output %q: %v", buf.String(), err)
	}

	if _, err := New(&buf, "nope", "text", nil); err == nil {
		t.Fatal("want a level error")
	}
	if _, err := New(&buf, "warn", "xml", nil); err == nil {
		t.Fatal("want a format error")
	}
}

func TestFloor(t *testing.T) {
	var buf bytes.Buffer
	l, _ := New(&buf, "debug", "text", nil)
	f := Floor(l, slog.LevelError).With("a", 1).WithGroup("g")
	f.Warn("dropped")
	f.Error("kept")
	if out := buf.String(); strings.Contains(out, "dropped") || !strings.Contains(out, "kept") {
		t.Fatalf("output %q", out)
	}
}

// TestJSONRecordsRedactedBeforeFormatting: a webhook URL with a token in
// its query, logged at every place a value can sit, gives JSON that parses
// and holds no token.
func TestJSONRecordsRedactedBeforeFormatting(t *testing.T) {
	var buf bytes.Buffer
	r := redact.NewRedactor()
	broker := "http://127.0.0.1:1/hook?token=t0kenValue&x=1"
	r.AddURL(broker)
	l, err := New(&buf, "debug", "json", r)
	if err != nil {
		t.Fatal(err)
	}
	l = l.With("broker", broker)
	l.WithGroup("g").Warn("publish failed to "+broker, "url", broker,
		"error", errors.New(`Post "`+broker+`": dial tcp 127.0.0.1:1: connection refused`),
		slog.Group("nested", "u", broker), "any", struct{ U string }{broker})
	line := strings.TrimSuffix(buf.String(), "\n")
	if strings.Contains(line, "\n") {
		t.Fatalf("more than one line: %q", line)
	}
	var rec map[string]any
	if err := json.Unmarshal([]byte(line), &rec); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, line)
	}
	if strings.Contains(line, "t0kenValue") {
		t.Fatalf("token shown: %s", line)
	}
	if !strings.Contains(line, `token=xxxxx\u0026x=1`) && !strings.Contains(line, "token=xxxxx&x=1") {
		t.Fatalf("the rest of the URL is lost: %s", line)
	}
}
