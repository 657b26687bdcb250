package exitcode

import (
	"errors"
	"fmt"
	"testing"
)

func TestCode(t *testing.T) {
	base := errors.New("boom")
	tests := []struct {
		name     string
		err      error
		fallback int
		want     int
	}{
		{"nil is OK", nil, Usage, OK},
		{"plain error takes the fallback", base, Usage, Usage},
		{"usage error", UsageError(base), Failure, Usage},
		{"failure error", FailureError(base), Usage, Failure},
		{"wrapped usage error", fmt.Errorf("ctx: %w", UsageError(base)), Failure, Usage},
		{"failure keeps an existing status", FailureError(UsageError(base)), OK, Usage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Code(tt.err, tt.fallback); got != tt.want {
				t.Fatalf("Code(%v) = %d, want %d", tt.err, got, tt.want)
			}
		})
	}
}

func TestWrappersKeepTheError(t *testing.T) {
	base := errors.New("boom")
	for _, err := range []error{UsageError(base), FailureError(base)} {
		if !errors.Is(err, base) {
			t.Fatalf("%v does not wrap the base error", err)
		}
		if err.Error() != "boom" {
			t.Fatalf("Error() = %q, want the base text", err.Error())
		}
	}
	if UsageError(nil) != nil || FailureError(nil) != nil {
		t.Fatal("wrapping nil must return nil")
	}
}
