package storetest

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// The operations of the differential test: each runs on the model and on
// the store and fails the run at the first observable difference.

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
		if d.fair {
			m.Metadata.TenantID = []string{"", "", "ta", "tb", "tc"}[d.rng.IntN(5)]
		}
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
			if m.Metadata.TenantID != "" {
				d.tenants[m.ID] = m.Metadata.TenantID
			}
		}
		desc = append(desc, fmt.Sprintf("%s key %q tenant %q delay %v expiry %v", short(m.ID), m.OrderingKey, m.Metadata.TenantID, delay, expiry))
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
	fair := d.fair && req.Ordering != outboxdriver.PerKey && d.rng.IntN(2) == 0
	if fair {
		req.Fairness = outboxdriver.FairnessTenant
		req.TenantCursor = d.cursor
		if d.rng.IntN(4) == 0 {
			req.TenantCursor = []string{"", "t", "ta", "tb", "tbb", "tc", "tz"}[d.rng.IntN(7)]
		}
		if d.rng.IntN(3) == 0 {
			req.TenantCap = 1 + d.rng.IntN(3)
			req.TenantHeld = map[string]int{}
			for _, t := range []string{"", "ta", "tb", "tc"} {
				if n := d.rng.IntN(4); n > 0 {
					req.TenantHeld[t] = n
				}
			}
		}
		d.note("acquire batch %d lease %v max claims %d %s, fair after %q cap %d held %v",
			req.BatchSize, req.Lease, req.MaxClaims, req.Ordering, req.TenantCursor, req.TenantCap, req.TenantHeld)
	} else {
		d.note("acquire batch %d lease %v max claims %d %s", req.BatchSize, req.Lease, req.MaxClaims, req.Ordering)
	}
	mb, err := d.model.Acquire(d.ctx, req)
	if err != nil {
		d.fail("model Acquire: %v", err)
	}
	rb, err := d.real.Store.Acquire(d.ctx, req)
	if err != nil {
		d.fail("store Acquire: %v", err)
	}
	got, want := describeBatch(rb), describeBatch(mb)
	if fair {
		got += fmt.Sprintf(" cursor %q more %v", rb.TenantCursor, rb.More)
		want += fmt.Sprintf(" cursor %q more %v", mb.TenantCursor, mb.More)
		d.cursor = mb.TenantCursor
	}
	if got != want {
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
