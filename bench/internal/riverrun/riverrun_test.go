package riverrun

import (
	"testing"

	"github.com/reliar/reliar/bench/internal/harness"
	"github.com/reliar/reliar/bench/internal/harness/harnesstest"
)

func TestVariants(t *testing.T) {
	for _, sys := range []harness.System{Defaults().System(), Tuned().System(), SQLiteTuned().System()} {
		t.Run(sys.Name, func(t *testing.T) {
			t.Parallel()
			harnesstest.Check(t, sys, false)
		})
	}
}
