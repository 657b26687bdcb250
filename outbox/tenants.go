package outbox

import (
	"time"

	"github.com/reliar/reliar/outbox/outboxdriver"
)

// hold adds row to the rows the dispatcher holds.
func (l *loop) hold(row *trackedRow) {
	l.rows[row.rec.Lease()] = row
	if l.s.MaxInFlightPerTenant > 0 {
		if l.tenantHeld == nil {
			l.tenantHeld = make(map[string]int)
		}
		l.tenantHeld[row.rec.Envelope.Metadata.TenantID]++
	}
}

// drop removes the row of lease from the rows the dispatcher holds.
func (l *loop) drop(lease outboxdriver.Lease) {
	row := l.rows[lease]
	if row == nil {
		return
	}
	delete(l.rows, lease)
	if l.tenantHeld != nil {
		t := row.rec.Envelope.Metadata.TenantID
		n := l.tenantHeld[t] - 1
		if n > 0 {
			l.tenantHeld[t] = n
		} else {
			delete(l.tenantHeld, t)
		}
		if l.capHeldBack && n < l.s.MaxInFlightPerTenant {
			// A tenant the last claim passed over at its cap has room
			// again: claim now rather than after PollInterval, so a capped
			// tenant with a fast receiver is not slowed to one claim's
			// worth per poll.
			l.capHeldBack = false
			l.nextClaim = time.Time{}
		}
	}
}

// fairRequest adds the fairness fields to a claim request. The held counts
// are copied: the claim runs in a goroutine of its own.
func (l *loop) fairRequest(req *outboxdriver.AcquireRequest) {
	if l.s.Fairness != FairnessTenant {
		return
	}
	req.Fairness = FairnessTenant
	req.TenantCursor = l.tenantCursor
	if l.s.MaxInFlightPerTenant > 0 {
		req.TenantCap = l.s.MaxInFlightPerTenant
		req.TenantHeld = make(map[string]int, len(l.tenantHeld))
		for t, n := range l.tenantHeld {
			req.TenantHeld[t] = n
		}
	}
}

// noteFairClaim records what a fair claim says about the next one: its
// cursor, and whether the per-tenant cap may have held due rows back (a
// claim that came back short without More), in which case a row of a
// capped tenant leaving brings the next claim forward.
func (l *loop) noteFairClaim(b *outboxdriver.AcquiredBatch, want int) {
	if l.s.Fairness != FairnessTenant {
		return
	}
	l.tenantCursor = b.TenantCursor
	l.capHeldBack = l.s.MaxInFlightPerTenant > 0 && len(l.tenantHeld) > 0 && b.Len() < want && !b.More
}

// interleaveTenants reorders a fair claim's records round-robin by tenant
// (each tenant's first record, then each one's second, ...), keeping each
// tenant's records in claim order and the tenants in the order of their
// first record. Records are published in queue order (a BatchPublisher
// gets them as one batch, in order), so a tenant with one row in a claim
// otherwise filled by another tenant's backlog is published among the
// first rows of the claim, not after the backlog's rows that are older.
func interleaveTenants(recs []outboxdriver.Record) {
	var order []string // tenants by first appearance
	groups := make(map[string][]outboxdriver.Record)
	for _, r := range recs {
		t := r.Envelope.Metadata.TenantID
		if _, ok := groups[t]; !ok {
			order = append(order, t)
		}
		groups[t] = append(groups[t], r)
	}
	if len(order) < 2 {
		return
	}
	// Deal one record of each tenant in turn, dropping a tenant once it has
	// none left.
	n := 0
	for round := 0; len(order) > 0; round++ {
		live := order[:0]
		for _, t := range order {
			g := groups[t]
			recs[n] = g[round]
			n++
			if round+1 < len(g) {
				live = append(live, t)
			}
		}
		order = live
	}
}
