package doctor

import (
	"strings"
	"testing"
	"time"
)

// TestCatalogIsWhatEvaluateReturns: the checks doctor --help lists are the
// ones Evaluate makes, in its order.
func TestCatalogIsWhatEvaluateReturns(t *testing.T) {
	got := Evaluate(healthy(), Thresholds{WarnAge: time.Minute, RedAge: time.Hour})
	cat := Catalog()
	if len(got) != len(cat) {
		t.Fatalf("Evaluate returns %d checks, the catalog lists %d", len(got), len(cat))
	}
	for i, c := range got {
		if c.Name != cat[i].Name {
			t.Errorf("check %d: Evaluate %q, catalog %q", i, c.Name, cat[i].Name)
		}
	}
	text := CatalogText(80)
	for _, c := range cat {
		if !strings.Contains(text, "  "+c.Name+" ") {
			t.Errorf("catalog text misses %q:\n%s", c.Name, text)
		}
	}
	for line := range strings.SplitSeq(strings.TrimSuffix(text, "\n"), "\n") {
		if len(line) > 80 {
			t.Errorf("line over 80 columns: %q", line)
		}
	}
}
