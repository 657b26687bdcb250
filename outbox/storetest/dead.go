package storetest

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

func deadCases() []testCase {
	return []testCase{
		{name: "ListDead orders by sequence and filters", run: deadListFilters},
		{name: "ListDead pages with a keyset cursor", run: deadListPages},
		{name: "ListDead lists the newest first when asked", run: deadListNewest},
		{name: "ListDead limit defaults to 100 and is capped at 1000", run: deadListLimits},
		{name: "ListDead returns poisoned dead rows apart", run: deadListPoisoned},
		{name: "RetryDead makes a dead row due again", run: deadRetry},
		{name: "RetryDead and PurgeDead touch only dead rows", run: deadOnly},
	}
}

func (f *fixture) listDead(q outboxdriver.DeadQuery) outboxdriver.DeadLetterPage {
	f.t.Helper()
	p, err := f.h.Store.ListDead(f.ctx, q)
	if err != nil {
		f.t.Fatalf("ListDead(%+v): %v", q, err)
	}
	return p
}

// deadIDs returns the ids of a page's records and checks that they come in
// sequence order.
func (f *fixture) deadIDs(p outboxdriver.DeadLetterPage) []reliar.MessageID {
	f.t.Helper()
	ids := make([]reliar.MessageID, len(p.Records))
	for i, r := range p.Records {
		ids[i] = r.Envelope.ID
		if i > 0 && r.Envelope.Sequence <= p.Records[i-1].Envelope.Sequence {
			f.t.Errorf("ListDead: sequence %d after %d, want ascending", r.Envelope.Sequence, p.Records[i-1].Envelope.Sequence)
		}
	}
	return ids
}

// cursor checks a page's NextAfterSequence.
func (f *fixture) cursor(what string, p outboxdriver.DeadLetterPage, want *int64) {
	f.t.Helper()
	switch {
	case want == nil && p.NextAfterSequence != nil:
		f.t.Errorf("%s: NextAfterSequence %d, want nil (the page was not full)", what, *p.NextAfterSequence)
	case want != nil && (p.NextAfterSequence == nil || *p.NextAfterSequence != *want):
		f.t.Errorf("%s: NextAfterSequence %v, want %d", what, deref(p.NextAfterSequence), *want)
	}
}

func tenantMsg(body reliar.Message, tenant string) reliar.Outgoing {
	m := reliar.NewMsg(body)
	m.Metadata.TenantID = tenant
	return m
}

// bySequence orders ids by their stored sequence.
func (f *fixture) bySequence(ids []reliar.MessageID) []reliar.MessageID {
	f.t.Helper()
	seq := make(map[reliar.MessageID]int64, len(ids))
	for _, id := range ids {
		seq[id] = f.inspect(id).Sequence
	}
	out := slices.Clone(ids)
	slices.SortFunc(out, func(a, b reliar.MessageID) int { return cmp.Compare(seq[a], seq[b]) })
	return out
}

func deadListFilters(f *fixture) {
	a1, b1, a2 := tenantMsg(created{N: 1}, "t1"), tenantMsg(renamed{}, "t2"), tenantMsg(created{N: 2}, "t2")
	early := f.kill(outboxdriver.DeadPermanent, a1, b1, a2)
	f.advance(time.Hour)
	a3 := tenantMsg(created{N: 3}, "t1")
	f.kill(outboxdriver.DeadMaxAttempts, a3)
	f.enqueueN(1) // a pending row never shows up
	now := f.now()

	all := f.bySequence(append(early, a3.ID))
	for _, c := range []struct {
		name string
		q    outboxdriver.DeadQuery
		want []reliar.MessageID
	}{
		{"no filter", outboxdriver.DeadQuery{}, all},
		{"message type", outboxdriver.DeadQuery{MessageType: "storetest.renamed"}, []reliar.MessageID{b1.ID}},
		{"tenant", outboxdriver.DeadQuery{TenantID: "t1"}, f.bySequence([]reliar.MessageID{a1.ID, a3.ID})},
		{"dead before", outboxdriver.DeadQuery{DeadBefore: now.Add(-30 * time.Minute)}, f.bySequence(early)},
		{"type and tenant", outboxdriver.DeadQuery{MessageType: "storetest.created", TenantID: "t2"}, []reliar.MessageID{a2.ID}},
		{"no match", outboxdriver.DeadQuery{TenantID: "nobody"}, nil},
	} {
		p := f.listDead(c.q)
		if got := f.deadIDs(p); !slices.Equal(got, c.want) {
			f.t.Errorf("%s: ListDead = %v, want %v", c.name, got, c.want)
		}
		f.cursor(c.name, p, nil)
	}
	rec := f.listDead(outboxdriver.DeadQuery{TenantID: "t1"}).Records[1]
	if rec.Envelope.ID != a3.ID || rec.DeadReason != outboxdriver.DeadMaxAttempts || rec.Attempts != 1 ||
		rec.LastError != "storetest: dead on purpose" || rec.Envelope.Metadata.TenantID != "t1" {
		f.t.Errorf("dead record = id %s reason %q attempts %d last_error %q tenant %q; want %s max_attempts 1 %q t1",
			rec.Envelope.ID, rec.DeadReason, rec.Attempts, rec.LastError, rec.Envelope.Metadata.TenantID, a3.ID, "storetest: dead on purpose")
	}
	f.near("DeadAt", &rec.DeadAt, now, now)
}

func deadListPages(f *fixture) {
	msgs := make([]reliar.Outgoing, 7)
	for i := range msgs {
		msgs[i] = newMsg(i)
	}
	all := f.bySequence(f.kill(outboxdriver.DeadPermanent, msgs...))
	var (
		got   []reliar.MessageID
		after int64
	)
	for page := 1; ; page++ {
		p := f.listDead(outboxdriver.DeadQuery{AfterSequence: after, Limit: 3})
		ids := f.deadIDs(p)
		got = append(got, ids...)
		if len(ids) < 3 {
			f.cursor("last page", p, nil)
			break
		}
		want := f.inspect(ids[2]).Sequence
		f.cursor("full page", p, &want)
		if p.NextAfterSequence == nil || page > 3 {
			f.t.Fatalf("page %d: no usable cursor, got %v so far", page, got)
		}
		after = *p.NextAfterSequence
	}
	if !slices.Equal(got, all) {
		f.t.Fatalf("pages = %v, want %v", got, all)
	}
	// A page one row short of full has no cursor; a page exactly filled by
	// the last rows still has one, and the page after it is empty.
	f.cursor("page one row short of full", f.listDead(outboxdriver.DeadQuery{Limit: 8}), nil)
	p := f.listDead(outboxdriver.DeadQuery{Limit: 7})
	last := f.inspect(all[6]).Sequence
	f.cursor("page filled by the last rows", p, &last)
	p = f.listDead(outboxdriver.DeadQuery{Limit: 7, AfterSequence: last})
	if len(p.Records)+len(p.Poisoned) != 0 {
		f.t.Errorf("page after the last row has %d records", len(p.Records))
	}
	f.cursor("empty page", p, nil)
}

func deadListNewest(f *fixture) {
	msgs := make([]reliar.Outgoing, 7)
	for i := range msgs {
		msgs[i] = newMsg(i)
		msgs[i].Metadata.TenantID = []string{"a", "b"}[i%2]
	}
	all := f.bySequence(f.kill(outboxdriver.DeadPermanent, msgs...))
	want := slices.Clone(all)
	slices.Reverse(want)
	var (
		got    []reliar.MessageID
		before int64
	)
	for page := 1; ; page++ {
		p := f.listDead(outboxdriver.DeadQuery{Newest: true, BeforeSequence: before, Limit: 3})
		if p.NextAfterSequence != nil {
			f.t.Errorf("page %d: NextAfterSequence %d on a newest-first listing, want nil", page, *p.NextAfterSequence)
		}
		for i, r := range p.Records {
			got = append(got, r.Envelope.ID)
			if i > 0 && r.Envelope.Sequence >= p.Records[i-1].Envelope.Sequence {
				f.t.Errorf("page %d: sequence %d after %d, want descending", page, r.Envelope.Sequence, p.Records[i-1].Envelope.Sequence)
			}
		}
		if len(p.Records) < 3 {
			if p.NextBeforeSequence != nil {
				f.t.Errorf("last page: NextBeforeSequence %d, want nil", *p.NextBeforeSequence)
			}
			break
		}
		smallest := p.Records[2].Envelope.Sequence
		if p.NextBeforeSequence == nil || *p.NextBeforeSequence != smallest || page > 3 {
			f.t.Fatalf("page %d: NextBeforeSequence %v, want %d; got %v so far", page, deref(p.NextBeforeSequence), smallest, got)
		}
		before = *p.NextBeforeSequence
	}
	if !slices.Equal(got, want) {
		f.t.Fatalf("newest-first pages = %v, want %v", got, want)
	}
	// Filters apply, and an ascending listing is unchanged by the new fields.
	p := f.listDead(outboxdriver.DeadQuery{Newest: true, TenantID: "b", Limit: 2})
	if ids := f.idsOf(p); !slices.Equal(ids, []reliar.MessageID{all[5], all[3]}) {
		f.t.Errorf("newest two of tenant b = %v, want %v", ids, []reliar.MessageID{all[5], all[3]})
	}
	if p := f.listDead(outboxdriver.DeadQuery{BeforeSequence: 1, Limit: 10}); len(p.Records) != 7 || p.NextBeforeSequence != nil {
		f.t.Errorf("an ascending listing with BeforeSequence set: %d records, NextBeforeSequence %v; want 7, nil", len(p.Records), deref(p.NextBeforeSequence))
	}
}

// idsOf returns the ids of a page's records, in their order.
func (f *fixture) idsOf(p outboxdriver.DeadLetterPage) []reliar.MessageID {
	ids := make([]reliar.MessageID, len(p.Records))
	for i, r := range p.Records {
		ids[i] = r.Envelope.ID
	}
	return ids
}

func deadListLimits(f *fixture) {
	const rows = 1001
	msgs := make([]reliar.Outgoing, rows)
	for i := range msgs {
		msgs[i] = newMsg(i)
	}
	f.kill(outboxdriver.DeadPermanent, msgs...)
	if got := len(f.listDead(outboxdriver.DeadQuery{}).Records); got != 100 {
		f.t.Errorf("ListDead without a limit: %d records, want the default 100", got)
	}
	p := f.listDead(outboxdriver.DeadQuery{Limit: 5000})
	if len(p.Records) != 1000 {
		f.t.Fatalf("ListDead with limit 5000: %d records, want the cap 1000", len(p.Records))
	}
	last := p.Records[999].Envelope.Sequence
	f.cursor("capped page", p, &last)
	p = f.listDead(outboxdriver.DeadQuery{Limit: 5000, AfterSequence: last})
	if len(p.Records) != 1 {
		f.t.Errorf("page after the cap: %d records, want 1", len(p.Records))
	}
	f.cursor("page after the cap", p, nil)
}

func deadListPoisoned(f *fixture) {
	good := f.bySequence(f.kill(outboxdriver.DeadPermanent, newMsg(1), newMsg(2)))
	poison := poisonRow()
	poison.Metadata = []byte(`not json at all`)
	f.insertRow(poison)
	if b := f.acquire(outboxdriver.AcquireRequest{BatchSize: 10}); len(b.Poisoned) != 1 {
		f.t.Fatalf("claim of the poison row: %d poisoned, want 1", len(b.Poisoned))
	}
	seq := f.inspect(poison.ID).Sequence

	p := f.listDead(outboxdriver.DeadQuery{Limit: 3})
	if got := f.deadIDs(p); !slices.Equal(got, good) {
		f.t.Errorf("Records = %v, want the decodable rows %v", got, good)
	}
	if len(p.Poisoned) != 1 || p.Poisoned[0].ID != poison.ID || p.Poisoned[0].Sequence != seq || p.Poisoned[0].Error == "" {
		f.t.Fatalf("Poisoned = %+v, want the poison row %s at sequence %d with its error", p.Poisoned, poison.ID, seq)
	}
	// The poison row was scanned last, so it is the cursor of the full page.
	f.cursor("page ending in a poisoned row", p, &seq)
	p = f.listDead(outboxdriver.DeadQuery{Limit: 3, AfterSequence: seq})
	if len(p.Records)+len(p.Poisoned) != 0 {
		f.t.Errorf("page after the poison row: %d records %d poisoned, want none", len(p.Records), len(p.Poisoned))
	}
	f.cursor("page after the poison row", p, nil)
}

func deadRetry(f *fixture) {
	now := f.now()
	lapsedOut := expiring(now.Add(time.Hour)) // expires before the retry
	longLived := expiring(now.Add(1000 * time.Hour))
	f.enqueue(lapsedOut, longLived)
	f.claim(2)
	f.advance(lease + time.Minute)
	recs := f.claim(2)
	if len(recs) != 2 || !recs[0].Reclaimed {
		f.t.Fatalf("reclaim: %d records, want 2 lapsed reclaims", len(recs))
	}
	failures := make([]outboxdriver.FailedOutcome, len(recs))
	for i, r := range recs {
		failures[i] = outboxdriver.FailedOutcome{Lease: r.Lease(), Error: "gave up", DeadReason: outboxdriver.DeadMaxAttempts}
	}
	f.affected("Fail dead", f.fail(failures...), 2)
	f.advance(2 * time.Hour)

	n, err := f.h.Store.RetryDead(f.ctx, []reliar.MessageID{lapsedOut.ID, longLived.ID})
	if err != nil || n != 2 {
		f.t.Fatalf("RetryDead = %d, %v; want 2, nil", n, err)
	}
	now = f.now()
	for _, id := range []reliar.MessageID{lapsedOut.ID, longLived.ID} {
		st := f.inspect(id)
		if st.DeadAt != nil || st.DeadReason != nil || st.PublishedAt != nil {
			f.t.Errorf("row %s: dead_at %v dead_reason %v published_at %v; want a pending row", id, deref(st.DeadAt), deref(st.DeadReason), deref(st.PublishedAt))
		}
		if st.Attempts != 0 || st.LapsedClaims != 0 || deref(st.LastError) != "gave up" {
			f.t.Errorf("row %s: attempts %d lapsed_claims %d last_error %v; want 0 0 and the kept error", id, st.Attempts, st.LapsedClaims, deref(st.LastError))
		}
		f.near("available_at", &st.AvailableAt, now, now)
		f.leaseCleared(id, st)
	}
	if st := f.inspect(lapsedOut.ID); st.ExpiresAt != nil {
		f.t.Errorf("expires_at %v was past at the retry, want it cleared", *st.ExpiresAt)
	}
	if st := f.inspect(longLived.ID); st.ExpiresAt == nil {
		f.t.Error("expires_at still in the future was cleared, want it kept")
	}
	recs = f.claim(10)
	if !sameIDs(recordIDs(recs), []reliar.MessageID{lapsedOut.ID, longLived.ID}) {
		f.t.Fatalf("claim after RetryDead: %v, want both rows", recordIDs(recs))
	}
	for _, r := range recs {
		if r.Reclaimed || r.Attempts != 0 || r.Envelope.Attempt != 1 {
			f.t.Errorf("row %s: Reclaimed %v Attempts %d Attempt %d; want a fresh start", r.Envelope.ID, r.Reclaimed, r.Attempts, r.Envelope.Attempt)
		}
		// The publisher must not be told the expiry that the retry cleared.
		if exp := r.Envelope.Metadata.Delivery.ExpiresAt; r.Envelope.ID == lapsedOut.ID && exp != nil {
			f.t.Errorf("row %s: envelope still expires at %v after RetryDead cleared expires_at", r.Envelope.ID, *exp)
		}
	}
}

func deadOnly(f *fixture) {
	dead := f.kill(outboxdriver.DeadPermanent, newMsg(0))[0]
	published, leased, pending := newMsg(1), newMsg(2), newMsg(3)
	f.enqueue(published)
	rec := f.claimOne(workerA, lease)
	f.affected("Complete", f.complete(rec.Lease()), 1)
	f.enqueue(leased)
	f.claimOne(workerA, time.Hour)
	f.enqueue(pending)
	others := []reliar.MessageID{published.ID, leased.ID, pending.ID, reliar.NewMessageID()}

	retry, purge := f.h.Store.RetryDead, f.h.Store.PurgeDead
	for _, op := range []struct {
		name string
		call func(context.Context, []reliar.MessageID) (int64, error)
	}{{"RetryDead", retry}, {"PurgeDead", purge}} {
		n, err := op.call(f.ctx, others)
		if err != nil || n != 0 {
			f.t.Errorf("%s of a published, a leased, a pending and an unknown row = %d, %v; want 0, nil", op.name, n, err)
		}
	}
	if st := f.inspect(published.ID); st.PublishedAt == nil || st.DeadAt != nil {
		f.t.Errorf("published row: published_at %v dead_at %v; want it untouched", deref(st.PublishedAt), deref(st.DeadAt))
	}
	if st := f.inspect(leased.ID); deref(st.LockedBy) != workerA || st.DeadAt != nil {
		f.t.Errorf("leased row: locked_by %v dead_at %v; want it untouched", deref(st.LockedBy), deref(st.DeadAt))
	}
	if st := f.inspect(pending.ID); st.DeadAt != nil || st.LockedBy != nil {
		f.t.Errorf("pending row: dead_at %v locked_by %v; want it untouched", deref(st.DeadAt), deref(st.LockedBy))
	}

	for _, step := range []struct {
		name string
		call func(context.Context, []reliar.MessageID) (int64, error)
		want int64
	}{{"PurgeDead", purge, 1}, {"second PurgeDead", purge, 0}, {"RetryDead of a purged row", retry, 0}} {
		if n, err := step.call(f.ctx, []reliar.MessageID{dead}); err != nil || n != step.want {
			f.t.Errorf("%s = %d, %v; want %d, nil", step.name, n, err, step.want)
		}
	}
	f.gone(dead)
}
