package redact

import (
	"bytes"
	"strings"
	"testing"
)

func TestURL(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"postgres password", "postgres://app:s3cret@db:5432/orders", "postgres://app:xxxxx@db:5432/orders"},
		{"password with an at sign", "postgres://app:p@ss@db/orders", "postgres://app:xxxxx@db/orders"},
		{"user without password is kept", "postgres://postgres@127.0.0.1/test", "postgres://postgres@127.0.0.1/test"},
		{"nats token", "nats://tok3n@127.0.0.1:4222", "nats://xxxxx@127.0.0.1:4222"},
		{"nats user and password", "nats://u:pw@host:4222", "nats://u:xxxxx@host:4222"},
		{"query password", "postgres://db/x?sslmode=disable&password=abc", "postgres://db/x?sslmode=disable&password=xxxxx"},
		{"token parameter", "https://h/x?Token=abc&x=1", "https://h/x?Token=xxxxx&x=1"},
		{"escaped secret key", "https://h/x?api%5Fkey=abc", "https://h/x?api%5Fkey=xxxxx"},
		{"two hosts", "postgres://u:pw@h1:5432,h2:5432/db", "postgres://u:xxxxx@h1:5432,h2:5432/db"},
		{"nothing secret", "sqlite:///tmp/x.db", "sqlite:///tmp/x.db"},
		{"ipv6", "postgres://u:pw@[::1]:5432/db", "postgres://u:xxxxx@[::1]:5432/db"},
		{"keyword string", "host=db user=app password=abc dbname=x", "host=db user=app password=xxxxx dbname=x"},
		{"quoted keyword value", "password='a b' host=db", "password=xxxxx host=db"},
		// Whatever does not parse cleanly is masked after the scheme.
		{"hash in password", "postgres://app:pw#hunter@db/x", "postgres://xxxxx"},
		{"hash after a numeric password", "postgres://app:1234#hunter@db/x", "postgres://xxxxx"},
		{"slash in password", "postgres://app:pw/hunter@db/x", "postgres://xxxxx"},
		{"question mark in password", "postgres://app:pw?hunter@db/x", "postgres://xxxxx"},
		{"space in password", "postgres://app:pw hunter@db/x", "postgres://xxxxx"},
		{"query password with a space", "postgres://db/x?password=a b", "postgres://db/x?password=xxxxx"},
		{"path with a space", "sqlite:///tmp/my file.db", "sqlite:///tmp/my file.db"},
		{"fragment with a token", "https://h/cb#access_token=abc&x=1", "https://h/cb#access_token=xxxxx&x=1"},
		{"control character", "postgres://u:p\x01w@h/db", "postgres://xxxxx"},
		{"bad port", "postgres://u:pw@h:xx/db", "postgres://xxxxx"},
		{"driver dsn", "mysql://root:hunter2@tcp(127.0.0.1:3306)/test", "mysql://xxxxx"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := URL(tt.in); got != tt.want {
				t.Fatalf("URL(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestString(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"inside an error", `parse "postgres://u:pw@h:xx/db": invalid port`, `parse "postgres://xxxxx": invalid port`},
		{"two urls", "a postgres://u:p1@h b nats://u:p2@h", "a postgres://u:xxxxx@h b nats://u:xxxxx@h"},
		{"url then punctuation", "connect to postgres://u:pw@h/db: refused", "connect to postgres://u:xxxxx@h/db: refused"},
		{"space in password", "connect to postgres://app:pw hunter@db/x: refused", "connect to postgres://xxxxx refused"},
		{"at sign later in the line", "connect to postgres://u@h/db failed: user@host denied", "connect to postgres://u@h/db failed: user@host denied"},
		{"quoted webhook", `Post "http://h:1/hook?token=X&x=1": dial tcp`, `Post "http://h:1/hook?token=xxxxx&x=1": dial tcp`},
		{"at sign in prose", "URL postgres://xxxxx: a password holding #, /, ?, @ or a space", "URL postgres://xxxxx: a password holding #, /, ?, @ or a space"},
		{"keyword pairs", "host=db user=app password=abc dbname=x", "host=db user=app password=xxxxx dbname=x"},
		{"no scheme before the separator", "a :// b password=x", "a :// b password=xxxxx"},
		{"nothing secret", "dispatcher 0 claimed 5 rows", "dispatcher 0 claimed 5 rows"},
		{"passive is not a secret", "passive=true", "passive=true"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := String(tt.in); got != tt.want {
				t.Fatalf("String(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestRedactorKnownSecrets: the secrets of a URL given to the command are
// masked wherever they show, also in pieces a parser quoted on its own.
func TestRedactorKnownSecrets(t *testing.T) {
	r := NewRedactor()
	r.AddURL("postgres://app:pw1#hunter@127.0.0.1:1/db")
	r.AddURL("postgres://app@h/db?password=pw5 spaced")
	r.AddURL("nats://natstoken@h:4222")
	r.Add("whsec_abcdef")
	for _, in := range []string{
		`database URL postgres://app:pw1#hunter@127.0.0.1:1/db: invalid port ":pw1" after host`,
		`password=pw5 spaced: unexpected spaces found in password`,
		`nats: authorization violation for natstoken`,
		`secret whsec_abcdef refused`,
		`escaped pw1%23hunter`,
	} {
		got := r.String(in)
		for _, piece := range []string{"pw1", "hunter", "pw5", "spaced", "natstoken", "whsec_abcdef"} {
			if strings.Contains(got, piece) {
				t.Errorf("String(%q) = %q shows %q", in, got, piece)
			}
		}
	}
	if got := r.String("ab c"); got != "ab c" {
		t.Errorf("short words changed: %q", got)
	}
	var nilR *Redactor
	if got := nilR.String("postgres://u:pw@h/db"); got != "postgres://u:xxxxx@h/db" {
		t.Errorf("nil Redactor: %q", got)
	}
}

func TestSecretKey(t *testing.T) {
	for key, want := range map[string]bool{
		"password": true, "sslpassword": true, "PWD": true, "auth_token": true, "client_secret": true,
		"api_key": true, "x-api-key": true, "jwt": true, "nkey": true, "sig": true,
		"sslmode": false, "passive": false, "authority": false, "connect_timeout": false, "": false,
	} {
		if got := SecretKey(key); got != want {
			t.Errorf("SecretKey(%q) = %t, want %t", key, got, want)
		}
	}
}

func TestWriter(t *testing.T) {
	var buf bytes.Buffer
	r := NewRedactor()
	r.Add("topsecret")
	w := r.Writer(&buf)
	in := "level=ERROR msg=failed url=postgres://u:topsecret@h/db other=topsecret\n"
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
