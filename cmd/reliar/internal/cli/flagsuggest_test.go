package cli

import (
	"strings"
	"testing"
)

// TestMisspeltFlagGetsASuggestion: a misspelt flag is answered like a
// misspelt command, with the closest flag of the command.
func TestMisspeltFlagGetsASuggestion(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"stats", "--databse-url", "x"}, "unknown flag: --databse-url Did you mean this? --database-url"},
		{[]string{"relay", "--max-atempts", "3"}, "Did you mean this? --max-attempts"},
		{[]string{"dead", "list", "--log-levl", "info"}, "Did you mean this? --log-level"},
	} {
		r := run(t, nil, tt.args...)
		if r.code != 2 || !strings.Contains(r.stderr, tt.want) || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("%q: exit %d, stderr %q; want 2 and one line with %q", tt.args, r.code, r.stderr, tt.want)
		}
	}
	r := run(t, nil, "stats", "--zzzzzzzzzz")
	if r.code != 2 || strings.Contains(r.stderr, "Did you mean") {
		t.Errorf("a flag near nothing: exit %d, stderr %q", r.code, r.stderr)
	}
}
