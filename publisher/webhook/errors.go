package webhook

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode"

	"github.com/reliar/reliar"
)

var (
	// ErrInvalidURL reports an endpoint that is not an absolute http or
	// https URL. Publishing to it fails permanently.
	ErrInvalidURL = errors.New("webhook: invalid URL")
	// ErrHostNotAllowed reports an endpoint whose host is not on
	// Config.AllowedHosts. Publishing to it fails permanently.
	ErrHostNotAllowed = errors.New("webhook: host not allowed")
	// ErrInvalidHeader reports a header name or value that HTTP cannot
	// carry (a control character, a name that is not a token). Publishing
	// the message fails permanently.
	ErrInvalidHeader = errors.New("webhook: invalid header")
	// ErrRedirect is matched (with errors.Is) by a *StatusError for a 3xx
	// answer: redirects are never followed.
	ErrRedirect = errors.New("webhook: redirect not followed")
	// ErrClosed is returned by Publish after Close. It is transient: the
	// message stays in the outbox for the next publisher.
	ErrClosed = errors.New("webhook: publisher closed")
)

// maxErrorBody bounds how much of an answer's body a StatusError keeps.
const maxErrorBody = 256

// StatusError reports a non-2xx answer. Its class follows the status:
// 408, 429 and 5xx are transient; 3xx and every other 4xx are permanent;
// anything else is transient.
type StatusError struct {
	// StatusCode is the answer's HTTP status.
	StatusCode int
	// Body is a prefix of the answer's body (at most 256 bytes, control
	// characters and invalid UTF-8 removed), for the operator.
	Body string
}

func (e *StatusError) Error() string {
	msg := fmt.Sprintf("webhook: receiver answered %d %s", e.StatusCode, http.StatusText(e.StatusCode))
	if e.StatusCode >= 300 && e.StatusCode < 400 {
		msg += " (redirects are not followed)"
	}
	if e.Body != "" {
		msg += ": " + e.Body
	}
	return msg
}

// Is reports whether target is ErrRedirect and the status is a 3xx.
func (e *StatusError) Is(target error) bool {
	return target == ErrRedirect && e.StatusCode >= 300 && e.StatusCode < 400
}

// FailureKind classifies the answer by its status.
func (e *StatusError) FailureKind() reliar.FailureKind {
	switch c := e.StatusCode; {
	case c == http.StatusRequestTimeout, c == http.StatusTooManyRequests, c >= 500 && c < 600:
		return reliar.FailureTransient
	case c >= 300 && c < 500:
		return reliar.FailurePermanent
	}
	return reliar.FailureTransient
}

// cleanBody keeps a printable prefix of an answer's body.
func cleanBody(b []byte) string {
	s := strings.ToValidUTF8(string(b), "")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	s = strings.TrimSpace(s)
	if len(s) > maxErrorBody {
		s = s[:maxErrorBody]
		s = strings.ToValidUTF8(s, "")
	}
	return s
}
