package webhook

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/reliar/reliar"
)

var (
	// ErrInvalidURL reports an endpoint that is not an absolute http or
	// https URL. Publishing to it fails permanently.
	ErrInvalidURL = errors.New("webhook: invalid URL")
	// ErrHostNotAllowed reports an endpoint whose host is not on
	// WithAllowedHosts. Publishing to it fails permanently.
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

// StatusError reports a non-2xx answer: its status only, never its body.
// Its class follows the rule of the package documentation: 400, 413, 415,
// 422 and the other 4xx that only the message causes are permanent; 3xx
// (the endpoint moved), 401 and 403 (credentials refused), 404 and 410 (no
// receiver there), 408, 409, 425, 429 and 5xx are transient.
type StatusError struct {
	// StatusCode is the answer's HTTP status.
	StatusCode int
}

func (e *StatusError) Error() string {
	msg := fmt.Sprintf("webhook: receiver answered %d %s", e.StatusCode, http.StatusText(e.StatusCode))
	if e.StatusCode >= 300 && e.StatusCode < 400 {
		msg += " (redirects are not followed)"
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
	case c >= 400 && c < 500 && !sharedStatus[c]:
		return reliar.FailurePermanent
	}
	return reliar.FailureTransient
}

// sharedStatus are the 4xx answers that every message would get alike, or
// that pass: a missing or moved receiver, refused credentials, a conflict
// or a rate limit. They are transient, so that a misconfigured endpoint
// dead-letters nothing.
var sharedStatus = map[int]bool{
	http.StatusUnauthorized:    true,
	http.StatusForbidden:       true,
	http.StatusNotFound:        true,
	http.StatusRequestTimeout:  true,
	http.StatusConflict:        true,
	http.StatusGone:            true,
	http.StatusTooEarly:        true,
	http.StatusTooManyRequests: true,
}
