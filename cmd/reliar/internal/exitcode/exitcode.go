// Package exitcode maps the CLI's errors to process exit statuses: 0 on
// success, 1 when a command failed at run time, 2 when it was called with bad
// input (flags, arguments, URLs, configuration).
package exitcode

import "errors"

// Exit statuses.
const (
	// OK is the status of a command that did what it was asked.
	OK = 0
	// Failure is the status of a command that failed at run time: an
	// unreachable database, a lost message, a broker error.
	Failure = 1
	// Usage is the status of a command called with bad input: an unknown
	// flag, a malformed value, a URL the CLI cannot use.
	Usage = 2
)

// Error carries the exit status a command's error should end the process
// with.
type Error struct {
	// Code is the exit status.
	Code int
	// Err is the underlying error; its text is what the user sees.
	Err error
}

func (e *Error) Error() string { return e.Err.Error() }

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// UsageError marks err as bad input (exit status 2). It returns nil for nil.
func UsageError(err error) error {
	if err == nil {
		return nil
	}
	return &Error{Code: Usage, Err: err}
}

// FailureError marks err as a run-time failure (exit status 1) unless it
// already carries an exit status. It returns nil for nil.
func FailureError(err error) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	return &Error{Code: Failure, Err: err}
}

// Code returns the exit status for err: OK for nil, the status of the first
// *Error in its chain, else fallback.
func Code(err error, fallback int) int {
	if err == nil {
		return OK
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return fallback
}
