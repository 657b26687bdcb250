package sqlitestore_test

import (
	"testing"

	"github.com/reliar/reliar/outbox/storetest"
)

// TestConformance runs the store contract's suite, each subtest on a fresh
// database file of its own.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Harness { return target.Harness(newStore(t)) })
}
