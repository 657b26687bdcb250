package reliar

import (
	"errors"
	"fmt"
)

// FailureKind classifies a failure: is trying again worth it?
type FailureKind int

const (
	// FailureTransient failures may succeed when retried: timeouts, lost
	// connections, an overloaded broker or database.
	FailureTransient FailureKind = iota
	// FailurePermanent failures will fail again the same way, whatever an
	// operator fixes: a condition of this one message, such as one too
	// large for the broker. A misconfiguration every message shares (an
	// unknown topic, a missing stream) is transient, so that it
	// dead-letters nothing.
	FailurePermanent
)

// String returns "transient" or "permanent".
func (k FailureKind) String() string {
	if k == FailurePermanent {
		return "permanent"
	}
	return "transient"
}

// Classified is implemented by errors that know their own [FailureKind].
type Classified interface {
	error
	FailureKind() FailureKind
}

// KindOf returns the kind of the first error in err's chain that reports one
// (found with errors.As), and FailureTransient when none does (also for nil).
func KindOf(err error) FailureKind {
	var c Classified
	if errors.As(err, &c) {
		return c.FailureKind()
	}
	return FailureTransient
}

// IsPermanent reports whether KindOf(err) is FailurePermanent.
func IsPermanent(err error) bool { return KindOf(err) == FailurePermanent }

// Permanent wraps err so that it is classified as a permanent failure. It
// returns nil for a nil err.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &classifiedError{err: err, kind: FailurePermanent}
}

type classifiedError struct {
	err  error
	kind FailureKind
}

func (e *classifiedError) Error() string            { return e.err.Error() }
func (e *classifiedError) Unwrap() error            { return e.err }
func (e *classifiedError) FailureKind() FailureKind { return e.kind }

// Format prints the wrapped error with its kind for %+v.
func (e *classifiedError) Format(s fmt.State, verb rune) {
	if verb == 'v' && s.Flag('+') {
		fmt.Fprintf(s, "%s error: %+v", e.kind, e.err)
		return
	}
	fmt.Fprint(s, e.err.Error())
}
