package logging

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/reliar/reliar/cmd/reliar/internal/redact"
)

// FuzzJSONLogLine logs a record built from a broker or database URL, a
// message type and an error text, as the relay logs a failed publish, in the
// JSON format: the output is exactly one line, it parses as one JSON
// object holding the record's message, and the URL's password never shows.
func FuzzJSONLogLine(f *testing.F) {
	for _, seed := range [][3]string{
		{"http://127.0.0.1:1/hook?token=X", "order_placed", `Post "http://127.0.0.1:1/hook?token=X": refused`},
		{"postgres://app:pw#hunter@db/x", "a\"b", "invalid port \":pw\" after host"},
		{"postgres://app:p@ss@db/x?password=a b", "t\n", "unexpected spaces"},
		{"nats://tok3n@h:4222", "\xff\xfe", "nats: authorization violation"},
		{"mysql://root:hunter2@tcp(127.0.0.1:3306)/test", "x", "\x00"},
		{"https://u:v@h/x?sig=abc&a=1#frag", `\"`, `"password=abc"`},
	} {
		f.Add(seed[0], seed[1], seed[2])
	}
	f.Fuzz(func(t *testing.T, rawURL, messageType, errText string) {
		var buf bytes.Buffer
		r := redact.NewRedactor()
		r.AddURL(rawURL)
		l, err := New(&buf, "debug", "json", r)
		if err != nil {
			t.Fatal(err)
		}
		l.Warn("publish failed", "broker", rawURL, "message_type", messageType, "error", errors.New(errText))
		out := buf.String()
		if !strings.HasSuffix(out, "\n") || strings.Count(out, "\n") != 1 {
			t.Fatalf("not one line: %q", out)
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(out), &rec); err != nil {
			t.Fatalf("not JSON: %v: %q", err, out)
		}
		if rec["msg"] != "publish failed" {
			t.Fatalf("msg = %v", rec["msg"])
		}
		broker, _ := rec["broker"].(string)
		if u, err := url.Parse(rawURL); err == nil && u.User != nil {
			if pw, ok := u.User.Password(); ok && len(pw) >= 3 && !strings.Contains(redact.Mask, pw) && strings.Contains(broker, pw) {
				t.Fatalf("password %q shown in %q", pw, broker)
			}
		}
	})
}
