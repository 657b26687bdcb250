package sqlitestore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"testing"

	"github.com/reliar/reliar"
)

// codedError stands in for the driver's error.
type codedError int

func (e codedError) Error() string { return fmt.Sprintf("sqlite error %d", int(e)) }
func (e codedError) Code() int     { return int(e) }

func TestKindOf(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want reliar.FailureKind
	}{
		{"busy", codedError(codeBusy), reliar.FailureTransient},
		{"busy snapshot", codedError(codeBusy | 2<<8), reliar.FailureTransient},
		{"locked", codedError(codeLocked), reliar.FailureTransient},
		{"interrupt", codedError(codeInterrupt), reliar.FailureTransient},
		{"io error", codedError(codeIOErr | 3<<8), reliar.FailureTransient},
		{"schema changed", codedError(codeSchema), reliar.FailureTransient},
		{"unknown code", codedError(200), reliar.FailureTransient},
		{"no such table", codedError(codeError), reliar.FailurePermanent},
		{"read only", codedError(codeReadOnly), reliar.FailurePermanent},
		{"corrupt", codedError(codeCorrupt), reliar.FailurePermanent},
		{"not a database", codedError(codeNotADB), reliar.FailurePermanent},
		{"unique", codedError(constraintUnique), reliar.FailurePermanent},
		{"wrapped code", fmt.Errorf("x: %w", codedError(codeBusy)), reliar.FailureTransient},
		{"canceled", context.Canceled, reliar.FailureTransient},
		{"deadline", fmt.Errorf("x: %w", context.DeadlineExceeded), reliar.FailureTransient},
		{"bad conn", driver.ErrBadConn, reliar.FailureTransient},
		{"conn done", sql.ErrConnDone, reliar.FailureTransient},
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
