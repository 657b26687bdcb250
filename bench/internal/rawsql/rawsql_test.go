package rawsql

import (
	"testing"

	"github.com/reliar/reliar/bench/internal/harness/harnesstest"
)

func TestSystem(t *testing.T) {
	harnesstest.Check(t, System(), false)
}
