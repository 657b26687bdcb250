package jetstreamrun

import (
	"testing"

	"github.com/reliar/reliar/bench/internal/harness"
	"github.com/reliar/reliar/bench/internal/harness/harnesstest"
	"github.com/reliar/reliar/bench/internal/reliarrun"
)

func TestSystems(t *testing.T) {
	for _, sys := range []harness.System{
		Reliar(DefaultURL, reliarrun.Defaults()),
		Reliar(DefaultURL, reliarrun.Batch512()),
		HandWritten(DefaultURL),
	} {
		t.Run(sys.Name, func(t *testing.T) {
			t.Parallel()
			harnesstest.Check(t, sys, true)
		})
	}
}
