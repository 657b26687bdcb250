// Package redact removes secrets (passwords, tokens) from URLs and from any
// text the CLI writes: error messages, logs and summaries.
//
// Redaction is textual, so that it also covers texts the CLI did not build
// itself, such as a driver's error that quotes the connection string. The
// rules are: the password of a URL's user information; the whole user
// information of a NATS URL without a password (there it is a token); and the
// value of every key=value pair whose key names a secret (password, token,
// secret, ...), as in a URL query or a PostgreSQL keyword/value string.
package redact

import (
	"io"
	"regexp"
)

// Mask replaces every redacted secret.
const Mask = "xxxxx"

var (
	// userPassword matches scheme://user:password@ (the password may itself
	// contain an unescaped @; the last one before the host wins).
	userPassword = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.\-]*://)([^/?#\s@:]*):([^/?#\s]*)@`)
	// natsToken matches a NATS URL whose user information is a bare token.
	natsToken = regexp.MustCompile(`((?i:nats|tls|ws|wss)://)([^/?#\s@:]+)@`)
	// secretPair matches key=value pairs whose key names a secret.
	secretPair = regexp.MustCompile(`(?i)\b(password|passwd|pwd|pass|sslpassword|token|auth_token|access_token|secret|client_secret|api_key|apikey|nkey|jwt|sslkey_password)=('[^']*'|"[^"]*"|[^&\s]+)`)
)

// String returns s with every secret replaced by [Mask].
func String(s string) string {
	s = userPassword.ReplaceAllString(s, "${1}${2}:"+Mask+"@")
	s = natsToken.ReplaceAllString(s, "${1}"+Mask+"@")
	s = secretPair.ReplaceAllString(s, "${1}="+Mask)
	return s
}

// URL returns a database or broker URL fit to be shown: its password, token
// and secret query parameters replaced by [Mask]. It never fails, even on a
// URL that does not parse.
func URL(raw string) string { return String(raw) }

// Writer redacts everything written through it. Each Write is redacted on
// its own, so a secret split across two writes would pass; log/slog handlers
// and the CLI's printers write whole lines.
type Writer struct {
	w io.Writer
}

// NewWriter returns a Writer that redacts into w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write writes the redacted p to the underlying writer. It reports len(p)
// on success, since the redacted text may be shorter or longer than p.
func (r *Writer) Write(p []byte) (int, error) {
	if _, err := io.WriteString(r.w, String(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
