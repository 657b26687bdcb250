package storetest

import (
	"testing"

	"github.com/reliar/reliar/outbox/outboxdriver"
)

// testCase is one rule of the store contract. needs, when set, names the
// capability the rule depends on; the case is skipped on stores without it.
type testCase struct {
	name  string
	needs func(outboxdriver.Capabilities) bool
	run   func(f *fixture)
}

// group is the rules of one area of the contract.
type group struct {
	name  string
	cases []testCase
}

// Run checks a store against every rule of the store contract (stated on
// outboxdriver.Store and in ARCHITECTURE.md, "The store contract"), one
// subtest per rule, grouped by area. Each subtest runs in parallel with the
// others and calls newHarness for a store of its own. Time passes only
// through Harness.Advance, and "now" is always the store's own clock as
// Stats reports it in AsOf, so the suite never sleeps and works for stores
// whose clock is a database's.
//
// Subtests that need an optional capability (per-key ordering, wake-ups, the
// maintenance lock, tenant fairness) are skipped when Store.Capabilities
// says the store lacks it, and TenantStats when the store does not
// implement outboxdriver.TenantStatser; nothing else is ever skipped.
func Run(t *testing.T, newHarness Factory) {
	t.Helper()
	groups := []group{
		{"Claim", claimCases()},
		{"Lapse", lapseCases()},
		{"Fencing", fencingCases()},
		{"Outcome", outcomeCases()},
		{"Poison", poisonCases()},
		{"Envelope", envelopeCases()},
		{"Purge", purgeCases()},
		{"Stats", statsCases()},
		{"DeadLetters", append(deadCases(), deadCapCases()...)},
		{"Enqueue", enqueueCases()},
		{"PerKey", orderingCases()},
		{"Fairness", fairnessCases()},
		{"Optional", optionalCases()},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			t.Parallel()
			for _, c := range g.cases {
				t.Run(c.name, func(t *testing.T) {
					t.Parallel()
					f := newFixture(t, newHarness)
					if c.needs != nil && !c.needs(f.h.Store.Capabilities()) {
						t.Skipf("the store's Capabilities() do not include what %q needs", c.name)
					}
					c.run(f)
				})
			}
		})
	}
}
