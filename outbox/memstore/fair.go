package memstore

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/reliar/reliar/outbox/outboxdriver"
)

// errFairPerKey refuses a claim that asks for both tenant fairness and
// per-key ordering, a combination outbox.Settings refuses too.
var errFairPerKey = errors.New("memstore: acquire: Fairness FairnessTenant cannot be combined with Ordering PerKey")

// acquireFair is the claim under FairnessTenant, the rule every store with
// the TenantFairness capability follows:
//
//   - A row's tenant is its tenant_id, the empty string for none.
//   - The tenants with pending rows (leased or not, due or not) are visited
//     in ascending byte order starting with the first one above
//     req.TenantCursor, wrapping around to the smallest one and stopping
//     before coming back past the cursor: at most req.BatchSize of them.
//   - A visited tenant t offers its first claimable rows in (available_at,
//     sequence) order, at most L_t = min(TenantShare(BatchSize, visited),
//     budget_t), where budget_t is BatchSize without a cap and
//     max(0, TenantCap - TenantHeld[t]) with one.
//   - The offered rows are ranked by their position within their tenant,
//     then by their tenant's visit position, and the first BatchSize are
//     claimed (or killed) exactly as the unfair claim claims rows.
//   - The batch's TenantCursor is the last tenant visited; More is set when
//     a tenant offered its full share with budget left over, or when the
//     ranking cut offered rows off.
//
// It scans every pending row: memstore is a model and a test double, and
// the unfair claim keeps its O(log n) per row.
func (s *Store) acquireFair(req outboxdriver.AcquireRequest, now time.Time, batch *outboxdriver.AcquiredBatch) {
	claimable := make(map[string][]*row)
	for _, r := range s.pending {
		rows, seen := claimable[r.tenant]
		if r.state == ready && !r.availableAt.After(now) && !r.expired(now) {
			rows = append(rows, r)
		} else if seen {
			continue
		}
		claimable[r.tenant] = rows
	}
	if len(claimable) == 0 {
		return
	}
	tenants := make([]string, 0, len(claimable))
	for t := range claimable {
		tenants = append(tenants, t)
	}
	slices.Sort(tenants)
	start, _ := slices.BinarySearch(tenants, req.TenantCursor)
	if start < len(tenants) && tenants[start] == req.TenantCursor {
		start++
	}
	ring := append(tenants[start:len(tenants):len(tenants)], tenants[:start]...)
	ring = ring[:min(len(ring), req.BatchSize)]
	batch.TenantCursor = ring[len(ring)-1]

	type offer struct {
		r         *row
		rank, pos int
	}
	share := outboxdriver.TenantShare(req.BatchSize, len(ring))
	var offers []offer
	for pos, t := range ring {
		budget := req.BatchSize
		if req.TenantCap > 0 {
			budget = max(0, req.TenantCap-req.TenantHeld[t])
		}
		limit := min(share, budget)
		rows := claimable[t]
		slices.SortFunc(rows, byDue)
		rows = rows[:min(len(rows), limit)]
		if len(rows) == limit && limit == share && share < budget {
			batch.More = true
		}
		for rank, r := range rows {
			offers = append(offers, offer{r: r, rank: rank, pos: pos})
		}
	}
	slices.SortFunc(offers, func(a, b offer) int {
		return cmp.Or(cmp.Compare(a.rank, b.rank), cmp.Compare(a.pos, b.pos))
	})
	if len(offers) > req.BatchSize {
		batch.More = true
		offers = offers[:req.BatchSize]
	}
	picked := make([]*row, len(offers))
	for i, o := range offers {
		picked[i] = o.r
	}
	slices.SortFunc(picked, byDue)
	batch.Records = make([]outboxdriver.Record, 0, len(picked))
	for _, r := range picked {
		s.claimOne(r, req, now, batch)
	}
}

// byDue orders rows by (available_at, sequence), the order of claims.
func byDue(a, b *row) int {
	return cmp.Or(a.availableAt.Compare(b.availableAt), cmp.Compare(a.seq, b.seq))
}

// TenantStats returns at most limit tenants with due rows (claimable now:
// no live lease, not expired, available_at reached), the one whose oldest
// due row is oldest first, ties by more due rows, then by tenant id. Rows
// without a tenant count under the empty string. It scans the pending rows.
func (s *Store) TenantStats(ctx context.Context, limit int) ([]outboxdriver.TenantStat, error) {
	if err := checkContext(ctx, "tenant stats"); err != nil {
		return nil, err
	}
	if limit <= 0 {
		return nil, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	type tally struct {
		due    int64
		oldest time.Time
	}
	byTenant := make(map[string]*tally)
	for _, r := range s.pending {
		if r.liveLease(now) || r.expired(now) || r.availableAt.After(now) {
			continue
		}
		t := byTenant[r.tenant]
		if t == nil {
			t = &tally{oldest: r.availableAt}
			byTenant[r.tenant] = t
		}
		t.due++
		if r.availableAt.Before(t.oldest) {
			t.oldest = r.availableAt
		}
	}
	out := make([]outboxdriver.TenantStat, 0, len(byTenant))
	for id, t := range byTenant {
		out = append(out, outboxdriver.TenantStat{TenantID: id, Due: t.due, OldestDueAge: now.Sub(t.oldest)})
	}
	slices.SortFunc(out, func(a, b outboxdriver.TenantStat) int {
		return cmp.Or(cmp.Compare(b.OldestDueAge, a.OldestDueAge), cmp.Compare(b.Due, a.Due), strings.Compare(a.TenantID, b.TenantID))
	})
	return out[:min(len(out), limit)], nil
}
