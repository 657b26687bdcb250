package redact

import (
	"bytes"
	"strings"
	"testing"
)

func TestString(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"postgres password", "postgres://app:s3cret@db:5432/orders", "postgres://app:xxxxx@db:5432/orders"},
		{"password with an at sign", "postgres://app:p@ss@db/orders", "postgres://app:xxxxx@db/orders"},
		{"user without password is kept", "postgres://postgres@127.0.0.1/test", "postgres://postgres@127.0.0.1/test"},
		{"mysql", "mysql://root:hunter2@tcp(127.0.0.1:3306)/test", "mysql://root:xxxxx@tcp(127.0.0.1:3306)/test"},
		{"nats token", "nats://tok3n@127.0.0.1:4222", "nats://xxxxx@127.0.0.1:4222"},
		{"nats user and password", "nats://u:pw@host:4222", "nats://u:xxxxx@host:4222"},
		{"query password", "postgres://db/x?sslmode=disable&password=abc", "postgres://db/x?sslmode=disable&password=xxxxx"},
		{"keyword string", "host=db user=app password=abc dbname=x", "host=db user=app password=xxxxx dbname=x"},
		{"quoted keyword value", "password='a b' host=db", "password=xxxxx host=db"},
		{"token parameter", "https://h/x?Token=abc&x=1", "https://h/x?Token=xxxxx&x=1"},
		{"inside an error", `parse "postgres://u:pw@h:xx/db": invalid port`, `parse "postgres://u:xxxxx@h:xx/db": invalid port`},
		{"two urls", "a postgres://u:p1@h b nats://u:p2@h", "a postgres://u:xxxxx@h b nats://u:xxxxx@h"},
		{"nothing secret", "sqlite:///tmp/x.db", "sqlite:///tmp/x.db"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := String(tt.in); got != tt.want {
				t.Fatalf("String(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if got := URL(tt.in); got != tt.want {
				t.Fatalf("URL(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestWriter(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	in := "level=ERROR msg=failed url=postgres://u:topsecret@h/db\n"
	n, err := w.Write([]byte(in))
	if err != nil || n != len(in) {
		t.Fatalf("Write = %d, %v; want %d, nil", n, err, len(in))
	}
	if strings.Contains(buf.String(), "topsecret") {
		t.Fatalf("secret leaked: %q", buf.String())
	}
	if !strings.Contains(buf.String(), "postgres://u:xxxxx@h/db") {
		t.Fatalf("unexpected output %q", buf.String())
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, bytes.ErrTooLarge }

func TestWriterError(t *testing.T) {
	if _, err := NewWriter(failingWriter{}).Write([]byte("x")); err == nil {
		t.Fatal("want the underlying error")
	}
}
