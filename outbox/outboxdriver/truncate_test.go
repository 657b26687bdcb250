package outboxdriver_test

import (
	"strings"
	"testing"

	"github.com/reliar/reliar/outbox/outboxdriver"
)

// CutLastError cuts where TruncateUTF8 does, never inside a UTF-8
// sequence, and reports a cut only when it shortened the text.
func TestCutLastError(t *testing.T) {
	const n = outboxdriver.ListedLastErrorBytes
	for _, tc := range []struct {
		name string
		in   string
		want string
		cut  bool
	}{
		{"empty", "", "", false},
		{"at the limit", strings.Repeat("a", n), strings.Repeat("a", n), false},
		{"one byte over", strings.Repeat("a", n+1), strings.Repeat("a", n), true},
		// "é" is two bytes; the limit falls between them.
		{"inside a rune", strings.Repeat("a", n-1) + "é", strings.Repeat("a", n-1), true},
		{"rune ends at the limit", strings.Repeat("a", n-2) + "é" + "b", strings.Repeat("a", n-2) + "é", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, cut := outboxdriver.CutLastError(tc.in)
			if got != tc.want || cut != tc.cut {
				t.Errorf("CutLastError: got %d bytes, cut %v; want %d bytes, cut %v", len(got), cut, len(tc.want), tc.cut)
			}
			if got != outboxdriver.TruncateUTF8(tc.in, n) {
				t.Errorf("CutLastError and TruncateUTF8 disagree")
			}
		})
	}
}
