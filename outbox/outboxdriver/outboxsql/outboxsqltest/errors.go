package outboxsqltest

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"testing"

	"github.com/reliar/reliar"
)

// KindCase is an error and the failure kind a store gives it.
type KindCase struct {
	Name string
	Err  error
	Want reliar.FailureKind
}

// commonKinds are the errors every database/sql store classifies alike.
var commonKinds = []KindCase{
	{"canceled", context.Canceled, reliar.FailureTransient},
	{"deadline", fmt.Errorf("x: %w", context.DeadlineExceeded), reliar.FailureTransient},
	{"bad conn", driver.ErrBadConn, reliar.FailureTransient},
	{"conn done", sql.ErrConnDone, reliar.FailureTransient},
	{"plain", errors.New("x"), reliar.FailureTransient},
	{"classified permanent", reliar.Permanent(errors.New("x")), reliar.FailurePermanent},
}

// ErrorKinds checks a store's classification of errors, on cases and on
// the errors every store classifies alike: kindOf gives each its kind, and
// wrap, the store's wrapping into its *Error, keeps that kind and the cause,
// leaves an error it already wrapped as it is, and returns nil for nil.
func ErrorKinds(t *testing.T, cases []KindCase, kindOf func(error) reliar.FailureKind, wrap func(op string, err error) error) {
	for _, tt := range append(cases, commonKinds...) {
		t.Run(tt.Name, func(t *testing.T) {
			if got := kindOf(tt.Err); got != tt.Want {
				t.Fatalf("kindOf(%v) = %v, want %v", tt.Err, got, tt.Want)
			}
			err := wrap("op", tt.Err)
			if reliar.KindOf(err) != tt.Want || !errors.Is(err, tt.Err) {
				t.Fatalf("wrapErr(%v) = %v", tt.Err, err)
			}
			if wrap("other", err) != err {
				t.Fatal("wrapErr wrapped an *Error again")
			}
		})
	}
	if wrap("op", nil) != nil {
		t.Fatal("wrapErr(nil) is not nil")
	}
}
