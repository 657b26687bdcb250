package watermillrun

import (
	"testing"

	"github.com/reliar/reliar/bench/internal/harness/harnesstest"
)

func TestVariants(t *testing.T) {
	for _, v := range []Variant{Defaults(), Tuned()} {
		t.Run(v.Name, func(t *testing.T) {
			t.Parallel()
			harnesstest.Check(t, v.System(), false)
		})
	}
}
