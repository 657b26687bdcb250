package harness

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine a scenario started
// outlives them.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
