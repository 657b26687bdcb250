package benchcmd

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"testing"
)

func TestExitCode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err    error
		code   int
		stderr string
	}{
		{nil, 0, ""},
		{flag.ErrHelp, 0, ""},
		{fmt.Errorf("%w: -reps must be positive", ErrUsage), 2, "cmd: usage: -reps must be positive\n"},
		{errors.New("boom"), 1, "cmd: boom\n"},
	}
	for _, tt := range tests {
		var buf bytes.Buffer
		if code := exitCode("cmd", tt.err, &buf); code != tt.code || buf.String() != tt.stderr {
			t.Errorf("exitCode(%v) = %d, %q; want %d, %q", tt.err, code, buf.String(), tt.code, tt.stderr)
		}
	}
}
