package reliarrun

import (
	"testing"

	"github.com/reliar/reliar/bench/internal/harness/harnesstest"
)

func TestVariants(t *testing.T) {
	for _, v := range append([]Variant{Defaults(), Batch512()}, Options()...) {
		t.Run(v.Name, func(t *testing.T) {
			t.Parallel()
			harnesstest.Check(t, v.System(), false)
		})
	}
}
