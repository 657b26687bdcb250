package mysqlstore

import (
	"errors"
	"fmt"
	"io"
	"net"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver/outboxsql/outboxsqltest"
)

func TestKindOf(t *testing.T) {
	server := func(n uint16) error { return &mysql.MySQLError{Number: n, Message: "x"} }
	tests := []outboxsqltest.KindCase{
		{Name: "deadlock", Err: server(errLockDeadlock), Want: reliar.FailureTransient},
		{Name: "lock wait timeout", Err: server(errLockWaitTimeout), Want: reliar.FailureTransient},
		{Name: "too many connections", Err: server(errTooManyConns), Want: reliar.FailureTransient},
		{Name: "shutdown", Err: server(errServerShutdown), Want: reliar.FailureTransient},
		{Name: "interrupted", Err: server(errQueryInterrupted), Want: reliar.FailureTransient},
		{Name: "statement timeout", Err: server(errStatementTimeout), Want: reliar.FailureTransient},
		{Name: "max execution time", Err: server(errMaxExecTime), Want: reliar.FailureTransient},
		{Name: "no such table", Err: server(errNoSuchTable), Want: reliar.FailurePermanent},
		{Name: "bad field", Err: server(errBadField), Want: reliar.FailurePermanent},
		{Name: "table access denied", Err: server(errTableAccess), Want: reliar.FailurePermanent},
		{Name: "duplicate", Err: server(errDupEntry), Want: reliar.FailurePermanent},
		{Name: "wrapped", Err: fmt.Errorf("x: %w", server(errNoSuchTable)), Want: reliar.FailurePermanent},
		{Name: "invalid conn", Err: mysql.ErrInvalidConn, Want: reliar.FailureTransient},
		{Name: "eof", Err: io.ErrUnexpectedEOF, Want: reliar.FailureTransient},
		{Name: "network", Err: &net.OpError{Op: "dial", Err: errors.New("refused")}, Want: reliar.FailureTransient},
	}
	outboxsqltest.ErrorKinds(t, tests, kindOf, wrapErr)
}

func TestSplitStatements(t *testing.T) {
	got := splitStatements("-- c\nCREATE TABLE a (\n x INT\n);\n\n-- d\nDROP TABLE b;\nSELECT 1")
	want := []string{"CREATE TABLE a (\n x INT\n)", "DROP TABLE b", "SELECT 1"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}
