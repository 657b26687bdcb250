package storetest

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/memstore"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// The differential test's flags; the environment variables
// RELIAR_STORETEST_SEED and RELIAR_STORETEST_STEPS set the same.
var (
	seedFlag  = flag.Uint64("storetest.seed", 0, "seed of the differential store test (0: a random one, printed)")
	stepsFlag = flag.Int("storetest.steps", 0, "steps of the differential store test per store (0: the caller's default)")
)

// DifferentialOptions tunes Differential.
type DifferentialOptions struct {
	// Steps is the number of random operations. The -storetest.steps flag
	// (or RELIAR_STORETEST_STEPS) overrides it. Defaults to 2000.
	Steps int
	// Seed makes the run reproducible. The -storetest.seed flag (or
	// RELIAR_STORETEST_SEED) overrides it. Defaults to a random seed, which
	// the test logs.
	Seed uint64
}

// Differential drives the store of newHarness and an outbox/memstore store,
// the model, through the same random sequence of operations and fails at
// the first observable difference: the records a claim returns (their ids
// in order, counters and envelopes), poisoned rows and max_claims deaths,
// the rows every outcome write affects (with current and stale lease
// tokens), purge reports, statistics, dead-letter pages, RetryDead and
// PurgeDead counts, and the bookkeeping of every row. Operations:
// enqueue with random attributes (delays, expiries, ordering keys, headers,
// reused ids, tenants when the store has the TenantFairness capability),
// rows inserted with plain SQL (poison, and with an upper-case id when the
// harness has InsertUpperCase), claims of random sizes, orders, MaxClaims
// and, with that capability, fair claims (their TenantCursor and More
// compared too; random cursors and per-tenant caps), Complete, Fail (retry
// or dead), Release and ExtendLease, clock jumps past leases and schedules
// (Harness.Advance), purges, and dead-letter retries and deletions.
//
// The run is seeded and reproducible: a failure names the seed and the
// step, and lists the steps before it; rerun with -storetest.seed.
func Differential(t *testing.T, newHarness Factory, opts DifferentialOptions) {
	t.Helper()
	seed, steps := opts.Seed, opts.Steps
	if v, err := strconv.ParseUint(os.Getenv("RELIAR_STORETEST_SEED"), 10, 64); err == nil && v != 0 {
		seed = v
	}
	if *seedFlag != 0 {
		seed = *seedFlag
	}
	if seed == 0 {
		seed = rand.Uint64()
	}
	if v, err := strconv.Atoi(os.Getenv("RELIAR_STORETEST_STEPS")); err == nil && v > 0 {
		steps = v
	}
	if *stepsFlag > 0 {
		steps = *stepsFlag
	}
	if steps <= 0 {
		steps = 2000
	}
	model, err := memstore.New()
	if err != nil {
		t.Fatal(err)
	}
	d := &differ{
		t:       t,
		ctx:     t.Context(),
		rng:     rand.New(rand.NewPCG(seed, 0x5eed)),
		seed:    seed,
		model:   model,
		real:    newHarness(t),
		keys:    map[reliar.MessageID]string{},
		tenants: map[reliar.MessageID]string{},
	}
	if d.real.Store == nil || d.real.Enqueue == nil || d.real.InsertRow == nil || d.real.Inspect == nil || d.real.Advance == nil {
		t.Fatal("factory returned an incomplete harness")
	}
	d.perKey = d.real.Store.Capabilities().PerKeyOrdering
	d.fair = d.real.Store.Capabilities().TenantFairness
	t.Logf("differential store test: seed %d, %d steps (rerun with -storetest.seed=%d)", seed, steps, seed)
	for d.step = 1; d.step <= steps; d.step++ {
		d.once()
		if d.step%100 == 0 {
			d.compareRows()
		}
	}
	d.compareRows()
}

// differ is one differential run.
// logTail is how many steps a failure report lists.
var logTail = func() int {
	if n, err := strconv.Atoi(os.Getenv("RELIAR_STORETEST_LOG")); err == nil && n > 0 {
		return n
	}
	return 25
}()

type differ struct {
	t      *testing.T
	ctx    context.Context
	rng    *rand.Rand
	seed   uint64
	step   int
	model  *memstore.Store
	real   Harness
	perKey bool
	fair   bool   // the store has the TenantFairness capability
	cursor string // the TenantCursor of the last fair claim

	ids     []reliar.MessageID // every id written, in order
	keys    map[reliar.MessageID]string
	tenants map[reliar.MessageID]string // the tenant of each id, when there is one
	leases  []leasePair                 // every lease handed out, current or stale
	log     []string                    // the steps so far, for the failure report
}

// leasePair is one claim of a row: the model's lease and the store's.
type leasePair struct{ model, real outboxdriver.Lease }

// fail reports a difference with the seed, the step and the steps before.
func (d *differ) fail(format string, args ...any) {
	d.t.Helper()
	tail := d.log[max(0, len(d.log)-logTail):]
	d.t.Fatalf("differential test, seed %d, step %d: %s\nthe steps before it:\n  %s",
		d.seed, d.step, fmt.Sprintf(format, args...), strings.Join(tail, "\n  "))
}

func (d *differ) note(format string, args ...any) {
	d.log = append(d.log, fmt.Sprintf("%d: ", d.step)+fmt.Sprintf(format, args...))
}

// once runs one random operation on both stores.
func (d *differ) once() {
	switch op := d.rng.IntN(100); {
	case op < 18:
		d.enqueue()
	case op < 22:
		d.insertRaw()
	case op < 42:
		d.acquire()
	case op < 66 && len(d.leases) > 0:
		d.outcome()
	case op < 76:
		d.advance()
	case op < 81:
		d.purge()
	case op < 88:
		d.stats()
	case op < 92:
		d.listDead()
	default:
		d.retryOrPurgeDead()
	}
}

// now returns the model's clock and the store's, each its own Stats' AsOf.
func (d *differ) now() (model, real time.Time) {
	ms, err := d.model.Stats(d.ctx)
	if err != nil {
		d.fail("model Stats: %v", err)
	}
	rs, err := d.real.Store.Stats(d.ctx)
	if err != nil {
		d.fail("store Stats: %v", err)
	}
	return ms.AsOf, rs.AsOf
}

// compareRows compares the bookkeeping of every row written so far.
func (d *differ) compareRows() {
	for _, id := range d.ids {
		ms, ok := d.model.Inspect(id)
		rs, err := d.real.Inspect(d.ctx, id)
		switch {
		case !ok && errors.Is(err, ErrNoRow):
			continue
		case errors.Is(err, ErrNoRow):
			d.fail("row %s: gone from the store, the model has it", short(id))
		case err != nil:
			d.fail("Inspect %s: %v", short(id), err)
		case !ok:
			d.fail("row %s: in the store, gone from the model", short(id))
		}
		describe := func(st RowState) string {
			return fmt.Sprintf("attempts %d claims %d lapsed %d leased %v published %v dead %v reason %v expires %v",
				st.Attempts, st.ClaimCount, st.LapsedClaims, st.LeaseToken != nil, st.PublishedAt != nil, st.DeadAt != nil,
				deref(st.DeadReason), st.ExpiresAt != nil)
		}
		if got, want := describe(rs), describe(ms); got != want {
			d.fail("row %s:\n  store: %s\n  model: %s", short(id), got, want)
		}
	}
}

// pendingRows describes the pending rows of both stores, times relative to
// each store's clock, for the report of a claim that differs.
func (d *differ) pendingRows() string {
	mNow, rNow := d.now()
	rel := func(t *time.Time, now time.Time) string {
		if t == nil {
			return "-"
		}
		return t.Sub(now).Round(time.Microsecond).String()
	}
	describe := func(st RowState, now time.Time) string {
		return fmt.Sprintf("seq %d available %s expires %s locked until %s lapsed %d dead %v",
			st.Sequence, rel(&st.AvailableAt, now), rel(st.ExpiresAt, now), rel(st.LockedUntil, now), st.LapsedClaims, deref(st.DeadReason))
	}
	var lines []string
	for _, id := range d.ids {
		ms, ok := d.model.Inspect(id)
		rs, err := d.real.Inspect(d.ctx, id)
		mDesc, rDesc := "absent", "absent"
		if ok {
			mDesc = describe(ms, mNow)
		}
		if err == nil {
			rDesc = describe(rs, rNow)
		}
		mDone := !ok || ms.PublishedAt != nil || ms.DeadAt != nil
		rDone := err != nil || rs.PublishedAt != nil || rs.DeadAt != nil
		if mDone && rDone {
			continue
		}
		tenant := ""
		if t, ok := d.tenants[id]; ok {
			tenant = fmt.Sprintf(" tenant %q", t)
		}
		lines = append(lines, fmt.Sprintf("%s key %q%s: %s | %s", short(id), d.keys[id], tenant, rDesc, mDesc))
	}
	return strings.Join(lines, "\n  ")
}

func short(id reliar.MessageID) string { s := id.String(); return s[len(s)-6:] }

func shorts(ids []reliar.MessageID) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = short(id)
	}
	return out
}
