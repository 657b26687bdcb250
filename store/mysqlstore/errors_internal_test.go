package mysqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/reliar/reliar"
)

func TestKindOf(t *testing.T) {
	server := func(n uint16) error { return &mysql.MySQLError{Number: n, Message: "x"} }
	tests := []struct {
		name string
		err  error
		want reliar.FailureKind
	}{
		{"deadlock", server(errLockDeadlock), reliar.FailureTransient},
		{"lock wait timeout", server(errLockWaitTimeout), reliar.FailureTransient},
		{"too many connections", server(errTooManyConns), reliar.FailureTransient},
		{"shutdown", server(errServerShutdown), reliar.FailureTransient},
		{"interrupted", server(errQueryInterrupted), reliar.FailureTransient},
		{"statement timeout", server(errStatementTimeout), reliar.FailureTransient},
		{"max execution time", server(errMaxExecTime), reliar.FailureTransient},
		{"no such table", server(errNoSuchTable), reliar.FailurePermanent},
		{"bad field", server(errBadField), reliar.FailurePermanent},
		{"table access denied", server(errTableAccess), reliar.FailurePermanent},
		{"duplicate", server(errDupEntry), reliar.FailurePermanent},
		{"wrapped", fmt.Errorf("x: %w", server(errNoSuchTable)), reliar.FailurePermanent},
		{"canceled", context.Canceled, reliar.FailureTransient},
		{"deadline", context.DeadlineExceeded, reliar.FailureTransient},
		{"bad conn", driver.ErrBadConn, reliar.FailureTransient},
		{"conn done", sql.ErrConnDone, reliar.FailureTransient},
		{"invalid conn", mysql.ErrInvalidConn, reliar.FailureTransient},
		{"eof", io.ErrUnexpectedEOF, reliar.FailureTransient},
		{"network", &net.OpError{Op: "dial", Err: errors.New("refused")}, reliar.FailureTransient},
		{"plain", errors.New("x"), reliar.FailureTransient},
		{"classified permanent", reliar.Permanent(errors.New("x")), reliar.FailurePermanent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := kindOf(tt.err); got != tt.want {
				t.Fatalf("kindOf(%v) = %v, want %v", tt.err, got, tt.want)
			}
			err := wrapErr("op", tt.err)
			if reliar.KindOf(err) != tt.want || !errors.Is(err, tt.err) {
				t.Fatalf("wrapErr(%v) = %v", tt.err, err)
			}
			if wrapErr("other", err) != err {
				t.Fatal("wrapErr wrapped an *Error again")
			}
		})
	}
	if wrapErr("op", nil) != nil {
		t.Fatal("wrapErr(nil) is not nil")
	}
}

func TestSplitStatements(t *testing.T) {
	got := splitStatements("-- c\nCREATE TABLE a (\n x INT\n);\n\n-- d\nDROP TABLE b;\nSELECT 1")
	want := []string{"CREATE TABLE a (\n x INT\n)", "DROP TABLE b", "SELECT 1"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}
