package reliarrun

import (
	"testing"

	"github.com/reliar/reliar/bench/internal/harness"
	"github.com/reliar/reliar/bench/internal/harness/harnesstest"
)

func TestVariants(t *testing.T) {
	systems := []harness.System{SQLite().System(), SQLiteDemo().System()}
	for _, v := range append([]Variant{Defaults(), Batch512()}, Options()...) {
		systems = append(systems, v.System())
	}
	for _, sys := range systems {
		t.Run(sys.Name, func(t *testing.T) {
			t.Parallel()
			harnesstest.Check(t, sys, false)
		})
	}
}
