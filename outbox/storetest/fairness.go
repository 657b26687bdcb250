package storetest

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// The rule of a claim under Fairness FairnessTenant, which these cases
// check (outboxdriver.FairnessTenant states it for store authors):
//
//   - A row's tenant is its tenant_id; rows without one form one tenant, the
//     empty string.
//   - The tenants with pending rows (leased or not, due or not) are visited
//     in ascending byte order, starting with the first one above
//     TenantCursor, wrapping around to the smallest and stopping before
//     coming back past the cursor; at most BatchSize tenants.
//   - A visited tenant t offers its first claimable rows in (available_at,
//     sequence) order, at most min(TenantShare(BatchSize, visited), budget),
//     budget being BatchSize without a cap and TenantCap - TenantHeld[t]
//     (not below zero) with one.
//   - The offers are ranked by position within their tenant, then by the
//     tenant's visit position; the first BatchSize are claimed as any claim.
//   - The batch's TenantCursor is the last tenant visited (the request's when
//     none was); More is set when a tenant offered its full share with budget
//     left over, or when the ranking cut offers off.
func fairnessCases() []testCase {
	fair := func(c outboxdriver.Capabilities) bool { return c.TenantFairness }
	return []testCase{
		{name: "a small tenant's row is claimed behind a big tenant's backlog", needs: fair, run: fairSmallTenant},
		{name: "a claim shares its batch round-robin among tenants", needs: fair, run: fairRoundRobin},
		{name: "tenants are visited after the cursor, wrapping around", needs: fair, run: fairCursorRing},
		{name: "successive claims rotate through every tenant", needs: fair, run: fairCursorRotates},
		{name: "rows without a tenant form one tenant", needs: fair, run: fairNoTenant},
		{name: "the per-tenant cap holds a tenant back", needs: fair, run: fairTenantCap},
		{name: "More is set when a share left rows behind", needs: fair, run: fairMore},
		{name: "a fair claim kills poison and exhausted rows as any claim", needs: fair, run: fairPoison},
		{name: "TenantStats lists the tenants with due rows, oldest first", run: tenantStats},
	}
}

// ofTenant returns a fresh message of tenant t ("" for none).
func ofTenant(t string) reliar.Outgoing { return tenantMsg(created{Name: "row"}, t) }

// enqueueTenant enqueues n messages of tenant t in one call and returns
// their ids.
func (f *fixture) enqueueTenant(t string, n int) []reliar.MessageID {
	f.t.Helper()
	msgs := make([]reliar.Outgoing, n)
	for i := range msgs {
		msgs[i] = ofTenant(t)
	}
	return f.enqueue(msgs...)
}

// fairClaim claims under FairnessTenant with the given batch and cursor.
func (f *fixture) fairClaim(batch int, cursor string) outboxdriver.AcquiredBatch {
	f.t.Helper()
	return f.acquire(outboxdriver.AcquireRequest{BatchSize: batch, Fairness: outboxdriver.FairnessTenant, TenantCursor: cursor})
}

// perTenant counts the records of each tenant.
func perTenant(recs []outboxdriver.Record) map[string]int {
	out := map[string]int{}
	for _, r := range recs {
		out[r.Envelope.Metadata.TenantID]++
	}
	return out
}

// describeTenants renders per-tenant counts in tenant order.
func describeTenants(m map[string]int) string {
	var parts []string
	for _, t := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%q:%d", t, m[t]))
	}
	return "{" + strings.Join(parts, " ") + "}"
}

// wantTenants checks the per-tenant counts of a claim's records.
func (f *fixture) wantTenants(why string, b outboxdriver.AcquiredBatch, want map[string]int) {
	f.t.Helper()
	if got := perTenant(b.Records); !maps.Equal(got, want) {
		f.t.Fatalf("%s: claimed per tenant %s, want %s", why, describeTenants(got), describeTenants(want))
	}
}

// inDueOrder checks that records come in (available_at, sequence) order.
func (f *fixture) inDueOrder(recs []outboxdriver.Record) {
	f.t.Helper()
	for i := 1; i < len(recs); i++ {
		a, b := recs[i-1], recs[i]
		if c := a.AvailableAt.Compare(b.AvailableAt); c > 0 || c == 0 && a.Envelope.Sequence > b.Envelope.Sequence {
			f.t.Fatalf("records %d and %d out of (available_at, sequence) order: (%v, %d) before (%v, %d)",
				i-1, i, a.AvailableAt, a.Envelope.Sequence, b.AvailableAt, b.Envelope.Sequence)
		}
	}
}

// fairSmallTenant: one tenant's thousand due rows, enqueued first, do not keep
// a second tenant's single row, enqueued last, out of the next claim.
func fairSmallTenant(f *fixture) {
	f.enqueueTenant("t-big", 1000)
	small := f.enqueue(ofTenant("t-small"))[0]
	b := f.fairClaim(10, "")
	if len(b.Records) != 10 || !slices.Contains(recordIDs(b.Records), small) {
		f.t.Fatalf("claim of 10 got %d records %s, want 10 with the small tenant's row %s",
			len(b.Records), describeTenants(perTenant(b.Records)), small)
	}
	f.inDueOrder(b.Records)
	if !b.More {
		f.t.Error("More unset, though the ranking cut the big tenant's rows off")
	}
	if b.TenantCursor != "t-small" {
		f.t.Errorf("TenantCursor %q, want the last tenant visited, %q", b.TenantCursor, "t-small")
	}
}

// fairRoundRobin: three tenants of five rows and a claim of six take each
// tenant's first two rows, in (available_at, sequence) order within each.
func fairRoundRobin(f *fixture) {
	now := f.now()
	// Each tenant's rows are due in an order that differs from their
	// sequence: its first two by available_at are the ones to take.
	offsets := []time.Duration{-1, -5, -2, -4, -3} // minutes
	want := map[reliar.MessageID]bool{}
	for _, t := range []string{"t1", "t2", "t3"} {
		for _, o := range offsets {
			m := ofTenant(t)
			m.AvailableAt = now.Add(o * time.Minute)
			f.enqueue(m)
			if o <= -4 {
				want[m.ID] = true
			}
		}
	}
	b := f.fairClaim(6, "")
	f.wantTenants("three tenants, batch 6", b, map[string]int{"t1": 2, "t2": 2, "t3": 2})
	for _, id := range recordIDs(b.Records) {
		if !want[id] {
			f.t.Errorf("claimed %s, not among its tenant's first two rows by available_at", id)
		}
	}
	f.inDueOrder(b.Records)
	if !b.More {
		f.t.Error("More unset, though each tenant's share left rows behind")
	}
	if b.TenantCursor != "t3" {
		f.t.Errorf("TenantCursor %q, want %q", b.TenantCursor, "t3")
	}
}

// fairCursorRing: a claim visits the tenants after its cursor (which need
// not be a tenant), wraps around, and never visits one twice. A tenant
// whose rows are all scheduled for later has pending rows, so it takes its
// turn though it offers nothing.
func fairCursorRing(f *fixture) {
	for _, t := range []string{"a", "b", "c"} {
		f.enqueueTenant(t, 3)
	}
	f.enqueue(at(f.now().Add(time.Hour)))
	tests := []struct {
		cursor string
		batch  int
		want   map[string]int
		last   string
	}{
		{"", 2, map[string]int{"a": 1, "b": 1}, "b"},
		{"a", 2, map[string]int{"b": 1, "c": 1}, "c"},
		// After the wrap comes "", the tenant of the scheduled row: it
		// takes a turn and offers nothing, so c's share fills the claim.
		{"b", 2, map[string]int{"c": 2}, ""},
		{"bb", 2, map[string]int{"c": 2}, ""},
		{"c", 2, map[string]int{"a": 2}, "a"},
		// Three tenants visited, shares of 2: every first row, then the
		// second row of the tenant visited first.
		{"zz", 3, map[string]int{"a": 2, "b": 1}, "b"},
		{"b", 3, map[string]int{"c": 2, "a": 1}, "a"},
		{"a", 10, map[string]int{"a": 3, "b": 3, "c": 3}, "a"},
	}
	for _, tt := range tests {
		b := f.fairClaim(tt.batch, tt.cursor)
		f.wantTenants(fmt.Sprintf("batch %d after cursor %q", tt.batch, tt.cursor), b, tt.want)
		if b.TenantCursor != tt.last {
			f.t.Errorf("batch %d after cursor %q: TenantCursor %q, want %q", tt.batch, tt.cursor, b.TenantCursor, tt.last)
		}
		f.affected("Release", f.release(leases(b.Records)...), int64(len(b.Records)))
	}
}

// fairCursorRotates: with fewer rows per claim than tenants, claims that
// pass on the previous cursor reach every tenant before any tenant twice,
// and every row is claimed.
func fairCursorRotates(f *fixture) {
	tenants := []string{"t1", "t2", "t3", "t4", "t5"}
	for _, t := range tenants {
		f.enqueueTenant(t, 3)
	}
	counts := map[string]int{}
	cursor, claimed := "", 0
	for i := range 8 {
		b := f.fairClaim(2, cursor)
		if i < 7 && len(b.Records) != 2 {
			f.t.Fatalf("claim %d got %d records, want 2", i, len(b.Records))
		}
		for t, n := range perTenant(b.Records) {
			counts[t] += n
		}
		claimed += len(b.Records)
		lo, hi := 3, 0
		for _, t := range tenants {
			lo, hi = min(lo, counts[t]), max(hi, counts[t])
		}
		if hi-lo > 1 {
			f.t.Fatalf("after claim %d (cursor %q): claimed per tenant %s; a tenant came round twice before another once",
				i, cursor, describeTenants(counts))
		}
		if b.TenantCursor == "" {
			f.t.Fatalf("claim %d returned no TenantCursor", i)
		}
		cursor = b.TenantCursor
	}
	if claimed != 15 {
		f.t.Fatalf("8 claims of 2 took %d of the 15 rows (per tenant %s)", claimed, describeTenants(counts))
	}
	if b := f.fairClaim(2, cursor); len(b.Records) != 0 {
		f.t.Fatalf("a claim after every row was taken got %d records", len(b.Records))
	}
}

// fairNoTenant: rows without a tenant share claims as one tenant, whose key,
// the empty string, sorts before every other.
func fairNoTenant(f *fixture) {
	f.enqueueTenant("", 4)
	f.enqueueTenant("a", 4)
	b := f.fairClaim(1, "a")
	f.wantTenants("batch 1 after the last tenant", b, map[string]int{"": 1})
	if b.TenantCursor != "" {
		f.t.Errorf("TenantCursor %q, want the empty string of the rows without a tenant", b.TenantCursor)
	}
	b = f.fairClaim(1, b.TenantCursor)
	f.wantTenants("batch 1 after the rows without a tenant", b, map[string]int{"a": 1})
	if b.TenantCursor != "a" {
		f.t.Errorf("TenantCursor %q, want %q", b.TenantCursor, "a")
	}
	b = f.fairClaim(4, "")
	f.wantTenants("batch 4", b, map[string]int{"": 2, "a": 2})
	if b.TenantCursor != "" {
		f.t.Errorf("TenantCursor %q: the claim after cursor \"\" visits \"a\", then wraps to \"\"", b.TenantCursor)
	}
}

// fairTenantCap: a tenant holding its cap gets no rows, one below it at most
// the difference, one without held rows at most the cap.
func fairTenantCap(f *fixture) {
	for _, t := range []string{"a", "b", "c", "d"} {
		f.enqueueTenant(t, 5)
	}
	b := f.acquire(outboxdriver.AcquireRequest{BatchSize: 10, Fairness: outboxdriver.FairnessTenant,
		TenantCap: 3, TenantHeld: map[string]int{"a": 3, "b": 2, "d": 7}})
	f.wantTenants("cap 3, a holding 3, b 2, d 7", b, map[string]int{"b": 1, "c": 3})
	if b.More {
		f.t.Error("More set, though only the cap held rows back")
	}
	b = f.acquire(outboxdriver.AcquireRequest{BatchSize: 10, Fairness: outboxdriver.FairnessTenant,
		TenantCap: 4, TenantHeld: map[string]int{"a": 3, "b": 3, "c": 3}})
	f.wantTenants("cap 4, a b c holding 3", b, map[string]int{"a": 1, "b": 1, "c": 1, "d": 4})
}

// fairMore: More tells the claimer that a share, not a cap, left claimable
// rows behind, so it may claim again at once though the batch is not full.
func fairMore(f *fixture) {
	// b and c have pending rows, all leased: they are visited, offer
	// nothing, and still cut a's share to 4 of 6.
	f.enqueueTenant("b", 1)
	f.enqueueTenant("c", 1)
	if got := len(f.claim(10)); got != 2 {
		f.t.Fatalf("leasing b's and c's rows: claimed %d, want 2", got)
	}
	f.enqueueTenant("a", 10)
	b := f.fairClaim(6, "")
	f.wantTenants("a's share of a claim of 6 among 3 tenants", b, map[string]int{"a": outboxdriver.TenantShare(6, 3)})
	if !b.More {
		f.t.Error("More unset, though a's share left 6 of its rows behind")
	}
	b = f.fairClaim(6, "")
	f.wantTenants("a's next share", b, map[string]int{"a": 4})
	if !b.More {
		f.t.Error("More unset, though a's rows filled its share exactly")
	}
	b = f.fairClaim(6, "")
	f.wantTenants("a's last rows", b, map[string]int{"a": 2})
	if b.More {
		f.t.Error("More set, though the claim took every claimable row")
	}
	f.enqueueTenant("d", 2)
	f.enqueueTenant("e", 1)
	b = f.fairClaim(10, "c")
	f.wantTenants("every claimable row", b, map[string]int{"d": 2, "e": 1})
	if b.More {
		f.t.Error("More set, though the claim took every claimable row")
	}
}

// fairPoison: an undecodable row goes dead with reason undecodable, a
// lapsed row past MaxClaims with reason max_claims, under a fair claim as
// under any, and both count towards the batch.
func fairPoison(f *fixture) {
	tired := f.enqueue(ofTenant("a"))[0]
	for range 2 {
		f.fairClaim(1, "")
		f.advance(lease + time.Minute)
	}
	poison := poisonRow()
	poison.Headers = []byte(`{"n": 1}`)
	poison.TenantID = ptr("a")
	f.insertRow(poison)
	f.enqueueTenant("a", 2)
	good := f.enqueueTenant("b", 1)
	b := f.acquire(outboxdriver.AcquireRequest{BatchSize: 4, Fairness: outboxdriver.FairnessTenant, MaxClaims: 1})
	if len(b.Poisoned) != 1 || b.Poisoned[0].ID != poison.ID {
		f.t.Errorf("Poisoned %v, want the undecodable row %s", b.Poisoned, poison.ID)
	}
	if !sameIDs(b.DeadMaxClaims, []reliar.MessageID{tired}) {
		f.t.Errorf("DeadMaxClaims %v, want the lapsed row %s", b.DeadMaxClaims, tired)
	}
	if !slices.Contains(recordIDs(b.Records), good[0]) || b.Len() != 4 {
		f.t.Fatalf("records %s, Len %d; want b's row among 4 rows consumed", describeTenants(perTenant(b.Records)), b.Len())
	}
	if st := f.inspect(tired); deref(st.DeadReason) != string(outboxdriver.DeadMaxClaims) {
		f.t.Errorf("the lapsed row: dead_reason %v, want max_claims", deref(st.DeadReason))
	}
	if st := f.inspect(poison.ID); deref(st.DeadReason) != string(outboxdriver.DeadUndecodable) {
		f.t.Errorf("the poison row: dead_reason %v, want undecodable", deref(st.DeadReason))
	}
}

// tenantStats: the tenants with due rows, the oldest due row first; rows
// leased, scheduled or expired are not due.
func tenantStats(f *fixture) {
	ts, ok := f.h.Store.(outboxdriver.TenantStatser)
	if !ok {
		f.t.Skipf("%T does not implement outboxdriver.TenantStatser", f.h.Store)
	}
	now := f.now()
	enq := func(t string, n int, ago time.Duration) {
		for range n {
			m := ofTenant(t)
			m.AvailableAt = now.Add(-ago)
			f.enqueue(m)
		}
	}
	enq("leased", 1, 20*time.Minute)
	if got := len(f.acquire(outboxdriver.AcquireRequest{BatchSize: 10, Lease: time.Hour}).Records); got != 1 {
		f.t.Fatalf("leasing the row of tenant leased: claimed %d, want 1", got)
	}
	enq("a", 3, 10*time.Minute)
	enq("a", 1, time.Minute)
	enq("b", 5, 5*time.Minute)
	enq("", 2, 7*time.Minute)
	f.enqueue(at(now.Add(time.Hour)))
	later := ofTenant("later")
	later.AvailableAt = now.Add(time.Hour)
	f.enqueue(later)
	gone := ofTenant("expired")
	expires := now.Add(time.Minute)
	gone.Metadata.Delivery.ExpiresAt = &expires
	gone.AvailableAt = now.Add(-30 * time.Minute)
	f.enqueue(gone)
	f.advance(2 * time.Minute)

	got, err := ts.TenantStats(f.ctx, 10)
	if err != nil {
		f.t.Fatalf("TenantStats: %v", err)
	}
	type want struct {
		id  string
		due int64
		age time.Duration
	}
	wants := []want{{"a", 4, 12 * time.Minute}, {"", 2, 9 * time.Minute}, {"b", 5, 7 * time.Minute}}
	if len(got) != len(wants) {
		f.t.Fatalf("TenantStats(10) = %+v, want tenants a, \"\" and b", got)
	}
	for i, w := range wants {
		g := got[i]
		if g.TenantID != w.id || g.Due != w.due {
			f.t.Fatalf("TenantStats(10)[%d] = %+v, want tenant %q with %d due (all: %+v)", i, g, w.id, w.due, got)
		}
		f.nearDuration(fmt.Sprintf("tenant %q OldestDueAge", w.id), g.OldestDueAge, w.age)
	}
	top, err := ts.TenantStats(f.ctx, 2)
	if err != nil {
		f.t.Fatalf("TenantStats(2): %v", err)
	}
	if len(top) != 2 || top[0].TenantID != "a" || top[1].TenantID != "" {
		f.t.Fatalf("TenantStats(2) = %+v, want tenants a and \"\"", top)
	}
}
