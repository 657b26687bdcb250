package sqlitestore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"

	"github.com/reliar/reliar"
)

// Error is a failed store operation. Its FailureKind tells the dispatcher
// whether trying again is worth it: SQLITE_BUSY, SQLITE_LOCKED, I/O errors,
// interruptions and context deadlines are transient; a missing table or
// column, a read-only or corrupt database and constraint violations are
// permanent.
type Error struct {
	// Op names the operation: "acquire", "complete", "enqueue", ...
	Op string
	// Kind is the failure's class.
	Kind reliar.FailureKind
	// Err is the driver's error.
	Err error
}

func (e *Error) Error() string {
	return fmt.Sprintf("sqlitestore: %s: %v", e.Op, e.Err)
}

// Unwrap returns the driver's error.
func (e *Error) Unwrap() error { return e.Err }

// FailureKind reports whether the failure is transient or permanent.
func (e *Error) FailureKind() reliar.FailureKind { return e.Kind }

// SQLite primary result codes (the low byte of an extended result code).
const (
	codeError      = 1
	codePerm       = 3
	codeBusy       = 5
	codeLocked     = 6
	codeReadOnly   = 8
	codeInterrupt  = 9
	codeIOErr      = 10
	codeCorrupt    = 11
	codeFull       = 13
	codeCantOpen   = 14
	codeProtocol   = 15
	codeSchema     = 17
	codeTooBig     = 18
	codeConstraint = 19
	codeMismatch   = 20
	codeMisuse     = 21
	codeAuth       = 23
	codeRange      = 25
	codeNotADB     = 26
)

// constraintUnique is SQLITE_CONSTRAINT_UNIQUE, an extended result code.
const constraintUnique = codeConstraint | 8<<8

// sqliteCoder is implemented by the driver's errors (modernc.org/sqlite's
// *sqlite.Error): Code is the extended result code.
type sqliteCoder interface {
	error
	Code() int
}

// sqliteCode returns the extended SQLite result code in err's chain, or 0.
func sqliteCode(err error) int {
	var c sqliteCoder
	if errors.As(err, &c) {
		return c.Code()
	}
	return 0
}

// kindOf classifies a driver error.
func kindOf(err error) reliar.FailureKind {
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, driver.ErrBadConn), errors.Is(err, sql.ErrConnDone):
		return reliar.FailureTransient
	}
	code := sqliteCode(err)
	if code == 0 {
		return reliar.KindOf(err)
	}
	switch code & 0xff {
	case codeError, codePerm, codeReadOnly, codeCorrupt, codeTooBig, codeConstraint,
		codeMismatch, codeMisuse, codeAuth, codeRange, codeNotADB:
		return reliar.FailurePermanent
	case codeBusy, codeLocked, codeInterrupt, codeIOErr, codeFull, codeCantOpen,
		codeProtocol, codeSchema:
		return reliar.FailureTransient
	}
	return reliar.FailureTransient
}

// wrapErr turns a driver error into an *Error of operation op. It returns nil
// for nil and leaves an *Error as it is.
func wrapErr(op string, err error) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	return &Error{Op: op, Kind: kindOf(err), Err: err}
}

// ErrInvalidOption is matched (with errors.Is) by the error of an option that
// [New] refuses.
var ErrInvalidOption = errors.New("sqlitestore: invalid option")

// ErrInvalidRequest is matched (with errors.Is) by the error of a request
// that cannot be carried out as asked, such as a purge without a batch size.
var ErrInvalidRequest = errors.New("sqlitestore: invalid request")

// invalidRequest returns a permanent *Error of op matching ErrInvalidRequest.
func invalidRequest(op, format string, args ...any) error {
	return &Error{Op: op, Kind: reliar.FailurePermanent,
		Err: fmt.Errorf("%w: "+format, append([]any{ErrInvalidRequest}, args...)...)}
}
