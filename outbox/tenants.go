package outbox

import "github.com/reliar/reliar/outbox/outboxdriver"

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
		if n := l.tenantHeld[t] - 1; n > 0 {
			l.tenantHeld[t] = n
		} else {
			delete(l.tenantHeld, t)
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
