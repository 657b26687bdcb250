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

// The differential test: random operations on the store and on memstore,
// compared step by step (storetest.Differential). SQLite commits every
// write to its file, and runs many times slower under the race detector,
// hence fewer steps than the server stores.
func TestDifferential(t *testing.T) {
	storetest.Differential(t, func(t *testing.T) storetest.Harness { return target.Harness(newStore(t)) },
		storetest.DifferentialOptions{Steps: 1000})
}
