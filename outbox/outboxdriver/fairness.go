package outboxdriver

import (
	"context"
	"strconv"
	"time"
)

// Fairness is how a claim shares its BatchSize among tenants.
type Fairness int

const (
	// FairnessUnordered claims due rows in (available_at, sequence) order,
	// whatever their tenant: one tenant's backlog delays every row due after
	// it.
	FairnessUnordered Fairness = iota
	// FairnessTenant shares each claim among the tenants that have due rows,
	// round-robin: the claim visits tenants in tenant_id order, starting
	// after AcquireRequest.TenantCursor and wrapping around, at most
	// BatchSize of them, and takes each visited tenant's first due row, then
	// each one's second, and so on until the claim is full. Rows without a
	// tenant form one tenant, whose key is the empty string.
	FairnessTenant
)

// String returns "unordered" or "tenant", the names ParseFairness reads.
func (f Fairness) String() string {
	switch f {
	case FairnessUnordered:
		return "unordered"
	case FairnessTenant:
		return "tenant"
	}
	return "Fairness(" + strconv.Itoa(int(f)) + ")"
}

// ParseFairness reads "unordered" (or the empty string) and "tenant".
func ParseFairness(s string) (Fairness, bool) {
	switch s {
	case "", "unordered":
		return FairnessUnordered, true
	case "tenant":
		return FairnessTenant, true
	}
	return 0, false
}

// TenantShare is how many rows of one tenant a FairnessTenant claim reads at
// most, when it visited tenants of them: twice an even share of batch,
// never more than batch. The rows a claim reads are so bounded by about
// twice its BatchSize whatever the backlog, and a claim whose tenants have
// fewer due rows than an even share still fills up from the others.
func TenantShare(batch, tenants int) int {
	if tenants <= 1 {
		return batch
	}
	return min(batch, max(1, (2*batch+tenants-1)/tenants))
}

// TenantStat is the pending work of one tenant.
type TenantStat struct {
	// TenantID is the tenant; the empty string stands for rows without one.
	TenantID string
	// Due counts the tenant's rows claimable now.
	Due int64
	// OldestDueAge is how long the tenant's oldest due row has been due.
	OldestDueAge time.Duration
}

// TenantStatser is implemented by stores that can list the tenants with due
// rows, for operators (reliar stats, the admin page).
type TenantStatser interface {
	// TenantStats returns at most limit tenants with due rows, the oldest
	// due row first (ties by more due rows, then tenant id).
	TenantStats(ctx context.Context, limit int) ([]TenantStat, error)
}
