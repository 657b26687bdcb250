package sqlitestore

import (
	"fmt"
	"testing"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver/outboxsql/outboxsqltest"
)

// codedError stands in for the driver's error.
type codedError int

func (e codedError) Error() string { return fmt.Sprintf("sqlite error %d", int(e)) }
func (e codedError) Code() int     { return int(e) }

func TestKindOf(t *testing.T) {
	tests := []outboxsqltest.KindCase{
		{Name: "busy", Err: codedError(codeBusy), Want: reliar.FailureTransient},
		{Name: "busy snapshot", Err: codedError(codeBusy | 2<<8), Want: reliar.FailureTransient},
		{Name: "locked", Err: codedError(codeLocked), Want: reliar.FailureTransient},
		{Name: "interrupt", Err: codedError(codeInterrupt), Want: reliar.FailureTransient},
		{Name: "io error", Err: codedError(codeIOErr | 3<<8), Want: reliar.FailureTransient},
		{Name: "schema changed", Err: codedError(codeSchema), Want: reliar.FailureTransient},
		{Name: "unknown code", Err: codedError(200), Want: reliar.FailureTransient},
		{Name: "no such table", Err: codedError(codeError), Want: reliar.FailurePermanent},
		{Name: "read only", Err: codedError(codeReadOnly), Want: reliar.FailurePermanent},
		{Name: "corrupt", Err: codedError(codeCorrupt), Want: reliar.FailurePermanent},
		{Name: "not a database", Err: codedError(codeNotADB), Want: reliar.FailurePermanent},
		{Name: "unique", Err: codedError(constraintUnique), Want: reliar.FailurePermanent},
		{Name: "wrapped code", Err: fmt.Errorf("x: %w", codedError(codeBusy)), Want: reliar.FailureTransient},
	}
	outboxsqltest.ErrorKinds(t, tests, kindOf, wrapErr)
}
