package mysqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"

	"github.com/go-sql-driver/mysql"
	"github.com/reliar/reliar"
)

// Error is a failed store operation. Its FailureKind tells the dispatcher
// whether trying again is worth it: deadlocks, lock wait timeouts, lost
// connections and context deadlines are transient; a missing table or column,
// a refused privilege or a malformed statement are permanent.
type Error struct {
	// Op names the operation: "acquire", "complete", "enqueue", ...
	Op string
	// Kind is the failure's class.
	Kind reliar.FailureKind
	// Err is the driver's error.
	Err error
}

func (e *Error) Error() string { return fmt.Sprintf("mysqlstore: %s: %v", e.Op, e.Err) }

// Unwrap returns the driver's error.
func (e *Error) Unwrap() error { return e.Err }

// FailureKind reports whether the failure is transient or permanent.
func (e *Error) FailureKind() reliar.FailureKind { return e.Kind }

// Server error numbers the store tells apart.
const (
	errDupEntry          = 1062 // ER_DUP_ENTRY
	errLockWaitTimeout   = 1205 // ER_LOCK_WAIT_TIMEOUT
	errLockDeadlock      = 1213 // ER_LOCK_DEADLOCK
	errTooManyConns      = 1040 // ER_CON_COUNT_ERROR
	errServerShutdown    = 1053 // ER_SERVER_SHUTDOWN
	errQueryInterrupted  = 1317 // ER_QUERY_INTERRUPTED
	errStatementTimeout  = 1969 // ER_STATEMENT_TIMEOUT (MariaDB)
	errMaxExecTime       = 3024 // ER_QUERY_TIMEOUT (MySQL)
	errNoSuchTable       = 1146 // ER_NO_SUCH_TABLE
	errBadField          = 1054 // ER_BAD_FIELD_ERROR
	errTableAccess       = 1142 // ER_TABLEACCESS_DENIED_ERROR
	errColumnAccess      = 1143 // ER_COLUMNACCESS_DENIED_ERROR
	errDBAccess          = 1044 // ER_DBACCESS_DENIED_ERROR
	errAccessDenied      = 1045 // ER_ACCESS_DENIED_ERROR
	errBadDB             = 1049 // ER_BAD_DB_ERROR
	errParse             = 1064 // ER_PARSE_ERROR
	errDataTooLong       = 1406 // ER_DATA_TOO_LONG
	errTruncatedValue    = 1366 // ER_TRUNCATED_WRONG_VALUE_FOR_FIELD
	errCheckConstraint   = 4025 // ER_CONSTRAINT_FAILED (MariaDB)
	errCheckConstraintMy = 3819 // ER_CHECK_CONSTRAINT_VIOLATED (MySQL)
	errWrongFuncArgs     = 1582 // ER_WRONG_PARAMCOUNT_TO_NATIVE_FCT
	errNoSuchFunction    = 1305 // ER_SP_DOES_NOT_EXIST
	errNotSupported      = 1235 // ER_NOT_SUPPORTED_YET
)

// permanentErrors are the server errors that fail the same way when retried.
var permanentErrors = map[uint16]bool{
	errNoSuchTable: true, errBadField: true, errTableAccess: true, errColumnAccess: true,
	errDBAccess: true, errAccessDenied: true, errBadDB: true, errParse: true,
	errDataTooLong: true, errTruncatedValue: true, errCheckConstraint: true,
	errCheckConstraintMy: true, errDupEntry: true, errWrongFuncArgs: true,
	errNoSuchFunction: true, errNotSupported: true,
}

// serverNumber returns the server error number in err's chain, or 0.
func serverNumber(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

// kindOf classifies a driver error. Server errors are transient unless known
// to be permanent; connection errors and deadlines are transient.
func kindOf(err error) reliar.FailureKind {
	if n := serverNumber(err); n != 0 {
		if permanentErrors[n] {
			return reliar.FailurePermanent
		}
		return reliar.FailureTransient
	}
	var ne net.Error
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, driver.ErrBadConn), errors.Is(err, sql.ErrConnDone),
		errors.Is(err, mysql.ErrInvalidConn), errors.Is(err, io.EOF),
		errors.Is(err, io.ErrUnexpectedEOF), errors.As(err, &ne):
		return reliar.FailureTransient
	}
	return reliar.KindOf(err)
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

// ErrDeadlock is matched (with errors.Is) by an *Error whose statement the
// server chose as a deadlock victim (ER_LOCK_DEADLOCK). InnoDB has then
// rolled back the statement's whole transaction: a caller's transaction
// cannot go on; roll it back and run it again from the start.
var ErrDeadlock = errors.New("mysqlstore: deadlock: the server rolled the transaction back")

// Is matches ErrDeadlock when the server reported a deadlock.
func (e *Error) Is(target error) bool {
	return target == ErrDeadlock && serverNumber(e.Err) == errLockDeadlock
}

// ErrInvalidOption is matched (with errors.Is) by the error of an option or
// a database handle that [New] refuses.
var ErrInvalidOption = errors.New("mysqlstore: invalid option")

// ErrInvalidRequest is matched (with errors.Is) by the error of a request
// that cannot be carried out as asked.
var ErrInvalidRequest = errors.New("mysqlstore: invalid request")

// invalidRequest returns a permanent *Error of op matching ErrInvalidRequest.
func invalidRequest(op, format string, args ...any) error {
	return &Error{Op: op, Kind: reliar.FailurePermanent,
		Err: fmt.Errorf("%w: "+format, append([]any{ErrInvalidRequest}, args...)...)}
}
