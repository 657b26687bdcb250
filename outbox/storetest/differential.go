package storetest

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
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
// reused ids), rows inserted with plain SQL (poison, and with an upper-case
// id when the harness has InsertUpperCase), claims of random sizes, orders
// and MaxClaims, Complete, Fail (retry or dead), Release and ExtendLease,
// clock jumps past leases and schedules (Harness.Advance), purges, and
// dead-letter retries and deletions.
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
		t:     t,
		ctx:   t.Context(),
		rng:   rand.New(rand.NewPCG(seed, 0x5eed)),
		seed:  seed,
		model: model,
		real:  newHarness(t),
		keys:  map[reliar.MessageID]string{},
	}
	if d.real.Store == nil || d.real.Enqueue == nil || d.real.InsertRow == nil || d.real.Inspect == nil || d.real.Advance == nil {
		t.Fatal("factory returned an incomplete harness")
	}
	d.perKey = d.real.Store.Capabilities().PerKeyOrdering
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

	ids    []reliar.MessageID // every id written, in order
	keys   map[reliar.MessageID]string
	leases []leasePair // every lease handed out, current or stale
	log    []string    // the steps so far, for the failure report
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

type diffMsg struct {
	N int `json:"n"`
}

func (diffMsg) MessageType() string { return "storetest.differential" }

// enqueue writes one to three messages with random attributes to both.
func (d *differ) enqueue() {
	mNow, rNow := d.now()
	n := 1 + d.rng.IntN(3)
	mMsgs, rMsgs := make([]reliar.Outgoing, n), make([]reliar.Outgoing, n)
	var desc []string
	for i := range n {
		m := reliar.NewMsg(diffMsg{N: d.rng.IntN(1000)})
		if len(d.ids) > 0 && d.rng.IntN(25) == 0 {
			m.ID = d.ids[d.rng.IntN(len(d.ids))] // a reused id
		}
		m.OrderingKey = []string{"", "", "", "k1", "k2", "k3"}[d.rng.IntN(6)]
		if d.rng.IntN(4) == 0 {
			m.Headers = map[string]string{"h": strconv.Itoa(d.rng.IntN(10))}
		}
		r := m
		var delay, expiry time.Duration
		switch d.rng.IntN(5) {
		case 0:
			delay = -time.Duration(1+d.rng.IntN(5)) * time.Minute
		case 1:
			delay = time.Duration(1+d.rng.IntN(5)) * time.Minute
		}
		if delay != 0 {
			m.AvailableAt, r.AvailableAt = mNow.Add(delay), rNow.Add(delay)
		}
		if d.rng.IntN(5) == 0 {
			expiry = time.Duration(d.rng.IntN(8)-2) * time.Minute
			if expiry == 0 {
				expiry = time.Minute
			}
			me, re := mNow.Add(expiry), rNow.Add(expiry)
			m.Metadata.Delivery.ExpiresAt, r.Metadata.Delivery.ExpiresAt = &me, &re
		}
		mMsgs[i], rMsgs[i] = m, r
		if _, known := d.keys[m.ID]; !known {
			d.keys[m.ID] = m.OrderingKey
		}
		desc = append(desc, fmt.Sprintf("%s key %q delay %v expiry %v", short(m.ID), m.OrderingKey, delay, expiry))
	}
	d.note("enqueue %s", strings.Join(desc, "; "))
	_, merr := d.model.Enqueue(d.ctx, mMsgs...)
	rerr := d.real.Enqueue(d.ctx, rMsgs...)
	if errors.Is(merr, outboxdriver.ErrDuplicateID) != errors.Is(rerr, outboxdriver.ErrDuplicateID) || (merr == nil) != (rerr == nil) {
		d.fail("Enqueue: model error %v, store error %v", merr, rerr)
	}
	if merr == nil {
		d.remember(msgIDs(mMsgs)...)
	}
}

func (d *differ) remember(ids ...reliar.MessageID) {
	for _, id := range ids {
		if !slices.Contains(d.ids, id) {
			d.ids = append(d.ids, id)
		}
	}
}

// insertRaw inserts, bypassing Enqueue, a row as another program writes it:
// decodable or poison, its id in upper case when the harness can.
func (d *differ) insertRaw() {
	r := outboxdriver.Row{ID: reliar.NewMessageID(), MessageType: "storetest.raw", Payload: []byte(`{"raw":true}`)}
	kind := "plain"
	switch d.rng.IntN(4) {
	case 0:
		r.Metadata, r.MetadataVersion, kind = []byte(`{"routing": 7}`), ptr(outboxdriver.MetadataVersion), "poison metadata"
	case 1:
		r.Headers, kind = []byte(`{"n": 1}`), "poison headers"
	}
	if d.rng.IntN(3) == 0 {
		r.OrderingKey = ptr("k" + strconv.Itoa(1+d.rng.IntN(3)))
		d.keys[r.ID] = *r.OrderingKey
	}
	upper := d.real.InsertUpperCase != nil && d.rng.IntN(2) == 0
	if upper {
		kind += ", upper-case id"
	}
	d.note("insert raw %s (%s)", short(r.ID), kind)
	// Each store's own clock: a database's default for the column may read
	// another clock, or a coarser one (SQLite's unixepoch('subsec') has
	// milliseconds), than its store.
	mNow, rNow := d.now()
	m := r
	m.AvailableAt, r.AvailableAt = &mNow, &rNow
	var rerr error
	if upper {
		rerr = d.real.InsertUpperCase(d.ctx, r)
	} else {
		rerr = d.real.InsertRow(d.ctx, r)
	}
	if rerr != nil {
		if upper {
			d.note("  the store refused the upper-case id: %v", rerr)
			return // refused at insert: the model never sees it either
		}
		d.fail("InsertRow: %v", rerr)
	}
	if err := d.model.InsertRow(m); err != nil {
		d.fail("model InsertRow: %v", err)
	}
	d.remember(r.ID)
}

// acquire claims with a random request on both and compares the batches.
func (d *differ) acquire() {
	req := outboxdriver.AcquireRequest{
		Worker:    "storetest-differential",
		BatchSize: 1 + d.rng.IntN(6),
		Lease:     time.Duration(1+d.rng.IntN(4)) * time.Minute,
		MaxClaims: d.rng.IntN(4),
	}
	if d.perKey && d.rng.IntN(2) == 0 {
		req.Ordering = outboxdriver.PerKey
	}
	d.note("acquire batch %d lease %v max claims %d %s", req.BatchSize, req.Lease, req.MaxClaims, req.Ordering)
	mb, err := d.model.Acquire(d.ctx, req)
	if err != nil {
		d.fail("model Acquire: %v", err)
	}
	rb, err := d.real.Store.Acquire(d.ctx, req)
	if err != nil {
		d.fail("store Acquire: %v", err)
	}
	if got, want := describeBatch(rb), describeBatch(mb); got != want {
		d.fail("Acquire(%+v):\n  store: %s\n  model: %s\nthe pending rows (store | model):\n  %s", req, got, want, d.pendingRows())
	}
	for i := range mb.Records {
		d.leases = append(d.leases, leasePair{model: mb.Records[i].Lease(), real: rb.Records[i].Lease()})
	}
}

// describeBatch renders what a claim returned, everything but the tokens
// and times, in the order of the claim.
func describeBatch(b outboxdriver.AcquiredBatch) string {
	var parts []string
	for _, r := range b.Records {
		e := r.Envelope
		parts = append(parts, fmt.Sprintf("%s(reclaimed %v attempts %d claims %d lapsed %d attempt %d type %s v%d key %q payload %s headers %v)",
			short(e.ID), r.Reclaimed, r.Attempts, r.ClaimCount, r.LapsedClaims, e.Attempt, e.MessageType, e.MessageVersion,
			e.OrderingKey, e.Payload, e.Headers))
	}
	poisoned := make([]string, len(b.Poisoned))
	for i, p := range b.Poisoned {
		poisoned[i] = short(p.ID)
	}
	slices.Sort(poisoned)
	dead := make([]string, len(b.DeadMaxClaims))
	for i, id := range b.DeadMaxClaims {
		dead[i] = short(id)
	}
	slices.Sort(dead)
	return fmt.Sprintf("records [%s] poisoned %v max_claims %v", strings.Join(parts, " "), poisoned, dead)
}

// outcome writes one random outcome for a few leases, current or stale.
func (d *differ) outcome() {
	n := 1 + d.rng.IntN(3)
	var pairs []leasePair
	for range n {
		pairs = append(pairs, d.leases[d.rng.IntN(len(d.leases))])
	}
	models := make([]outboxdriver.Lease, len(pairs))
	reals := make([]outboxdriver.Lease, len(pairs))
	var names []string
	for i, p := range pairs {
		models[i], reals[i] = p.model, p.real
		names = append(names, short(p.model.ID))
	}
	dedup := func(ls []outboxdriver.Lease) []outboxdriver.Lease {
		out := ls[:0:0]
		for _, l := range ls {
			if !slices.Contains(out, l) {
				out = append(out, l)
			}
		}
		return out
	}
	models, reals = dedup(models), dedup(reals)
	var op string
	var mn, rn int64
	var merr, rerr error
	switch d.rng.IntN(5) {
	case 0:
		op = "complete"
		mn, merr = d.model.Complete(d.ctx, models)
		rn, rerr = d.real.Store.Complete(d.ctx, reals)
	case 1:
		delay := time.Duration(d.rng.IntN(4)) * time.Minute
		op = fmt.Sprintf("fail, retry after %v", delay)
		mn, merr = d.model.Fail(d.ctx, failures(models, delay, ""))
		rn, rerr = d.real.Store.Fail(d.ctx, failures(reals, delay, ""))
	case 2:
		reason := []outboxdriver.DeadReason{outboxdriver.DeadPermanent, outboxdriver.DeadMaxAttempts}[d.rng.IntN(2)]
		op = "fail, dead " + string(reason)
		mn, merr = d.model.Fail(d.ctx, failures(models, 0, reason))
		rn, rerr = d.real.Store.Fail(d.ctx, failures(reals, 0, reason))
	case 3:
		op = "release"
		mn, merr = d.model.Release(d.ctx, models)
		rn, rerr = d.real.Store.Release(d.ctx, reals)
	default:
		ext := time.Duration(1+d.rng.IntN(3)) * time.Minute
		op = fmt.Sprintf("extend by %v", ext)
		mn, merr = d.model.ExtendLease(d.ctx, models, ext)
		rn, rerr = d.real.Store.ExtendLease(d.ctx, reals, ext)
	}
	d.note("%s %v", op, names)
	if merr != nil || rerr != nil {
		d.fail("%s: model error %v, store error %v", op, merr, rerr)
	}
	if mn != rn {
		d.fail("%s of %v: store affected %d rows, model %d", op, names, rn, mn)
	}
}

func failures(leases []outboxdriver.Lease, delay time.Duration, reason outboxdriver.DeadReason) []outboxdriver.FailedOutcome {
	out := make([]outboxdriver.FailedOutcome, len(leases))
	for i, l := range leases {
		out[i] = outboxdriver.FailedOutcome{Lease: l, Error: "storetest: differential failure", RetryAfter: delay, DeadReason: reason}
	}
	return out
}

// advance jumps both clocks by whole minutes: leases lapse, schedules come
// due, rows expire.
func (d *differ) advance() {
	by := time.Duration(1+d.rng.IntN(5)) * time.Minute
	d.note("advance %v", by)
	d.model.Advance(by)
	if err := d.real.Advance(d.ctx, by); err != nil {
		d.fail("Advance: %v", err)
	}
}

// purge runs one pass with random retentions on both. The batch is large
// enough for every eligible row, so that rows tied on a time never make
// the two stores pick different ones.
func (d *differ) purge() {
	retention := func() *time.Duration {
		switch d.rng.IntN(3) {
		case 0:
			return nil
		case 1:
			return ptr(time.Duration(0))
		}
		return ptr(time.Duration(1+d.rng.IntN(4)) * time.Minute)
	}
	req := outboxdriver.PurgeRequest{PublishedRetention: retention(), DeadRetention: retention()}
	d.note("purge published %v dead %v", deref(req.PublishedRetention), deref(req.DeadRetention))
	mr, err := d.model.Purge(d.ctx, req)
	if err != nil {
		d.fail("model Purge: %v", err)
	}
	rr, err := d.real.Store.Purge(d.ctx, req)
	if err != nil {
		d.fail("store Purge: %v", err)
	}
	if mr != rr {
		d.fail("Purge: store %+v, model %+v", rr, mr)
	}
}

// stats compares the partition of the pending rows.
func (d *differ) stats() {
	d.note("stats")
	ms, err := d.model.Stats(d.ctx)
	if err != nil {
		d.fail("model Stats: %v", err)
	}
	rs, err := d.real.Store.Stats(d.ctx)
	if err != nil {
		d.fail("store Stats: %v", err)
	}
	m := [6]int64{ms.Pending, ms.Due, ms.Leased, ms.Scheduled, ms.ExpiredPending, ms.Dead}
	r := [6]int64{rs.Pending, rs.Due, rs.Leased, rs.Scheduled, rs.ExpiredPending, rs.Dead}
	if m != r {
		d.fail("Stats [pending due leased scheduled expired dead]: store %v, model %v", r, m)
	}
	if diff := ms.OldestDueAge - rs.OldestDueAge; diff > slack || diff < -slack {
		d.fail("Stats.OldestDueAge: store %v, model %v", rs.OldestDueAge, ms.OldestDueAge)
	}
}

// listDead compares a page of dead letters: ids in order, reasons and
// attempts, and the poisoned ids.
func (d *differ) listDead() {
	q := outboxdriver.DeadQuery{Limit: 1 + d.rng.IntN(20)}
	d.note("list dead, limit %d", q.Limit)
	mp, err := d.model.ListDead(d.ctx, q)
	if err != nil {
		d.fail("model ListDead: %v", err)
	}
	rp, err := d.real.Store.ListDead(d.ctx, q)
	if err != nil {
		d.fail("store ListDead: %v", err)
	}
	describe := func(p outboxdriver.DeadLetterPage) string {
		var parts []string
		for _, r := range p.Records {
			parts = append(parts, fmt.Sprintf("%s(%s, %d attempts)", short(r.Envelope.ID), r.DeadReason, r.Attempts))
		}
		for _, r := range p.Poisoned {
			parts = append(parts, short(r.ID)+"(poison)")
		}
		return strings.Join(parts, " ") + fmt.Sprintf(" more %v", p.NextAfterSequence != nil)
	}
	if got, want := describe(rp), describe(mp); got != want {
		d.fail("ListDead(limit %d):\n  store: %s\n  model: %s", q.Limit, got, want)
	}
}

// retryOrPurgeDead retries or deletes a few rows, dead or not.
func (d *differ) retryOrPurgeDead() {
	if len(d.ids) == 0 {
		return
	}
	var ids []reliar.MessageID
	for range 1 + d.rng.IntN(3) {
		ids = append(ids, d.ids[d.rng.IntN(len(d.ids))])
	}
	var mn, rn int64
	var merr, rerr error
	op := "retry dead"
	if d.rng.IntN(3) == 0 {
		op = "purge dead"
		mn, merr = d.model.PurgeDead(d.ctx, ids)
		rn, rerr = d.real.Store.PurgeDead(d.ctx, ids)
	} else {
		mn, merr = d.model.RetryDead(d.ctx, ids)
		rn, rerr = d.real.Store.RetryDead(d.ctx, ids)
	}
	d.note("%s %v", op, shorts(ids))
	if merr != nil || rerr != nil {
		d.fail("%s: model error %v, store error %v", op, merr, rerr)
	}
	if mn != rn {
		d.fail("%s %v: store affected %d, model %d", op, shorts(ids), rn, mn)
	}
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
		if got, want := describe(rs), describe(RowState(ms)); got != want {
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
			mDesc = describe(RowState(ms), mNow)
		}
		if err == nil {
			rDesc = describe(rs, rNow)
		}
		mDone := !ok || ms.PublishedAt != nil || ms.DeadAt != nil
		rDone := err != nil || rs.PublishedAt != nil || rs.DeadAt != nil
		if mDone && rDone {
			continue
		}
		lines = append(lines, fmt.Sprintf("%s key %q: %s | %s", short(id), d.keys[id], rDesc, mDesc))
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
