package ops

import (
	"context"
	"fmt"
	"strconv"
	"unicode"
	"unicode/utf8"

	"github.com/reliar/reliar/outbox/outboxdriver"
)

// DefaultTenants is how many tenants reliar stats and the admin page list
// unless told otherwise.
const DefaultTenants = 10

// MaxTenants bounds how many tenants may be asked for.
const MaxTenants = 1000

// tenantWidth is how much of a tenant id the table shows.
const tenantWidth = 64

// TenantDocument is one tenant's due work in the stats documents.
type TenantDocument struct {
	// TenantID is empty for the rows without a tenant.
	TenantID string `json:"tenant_id"`
	// Due counts the tenant's rows claimable now.
	Due int64 `json:"due"`
	// OldestDueAgeSeconds is how long its oldest due row has been due.
	OldestDueAgeSeconds float64 `json:"oldest_due_age_seconds"`
}

// Tenants reads the n tenants whose due rows have waited longest, when
// store lists tenants (outboxdriver.TenantStatser); ok is false when it
// does not, or when n is not positive (the list is off), and nothing is
// read.
func Tenants(ctx context.Context, store any, n int) (stats []outboxdriver.TenantStat, ok bool, err error) {
	ts, can := store.(outboxdriver.TenantStatser)
	if !can || n <= 0 {
		return nil, false, nil
	}
	stats, err = ts.TenantStats(ctx, min(n, MaxTenants))
	if err != nil {
		return nil, true, fmt.Errorf("read the tenants' due rows: %w", err)
	}
	if len(stats) > n {
		stats = stats[:n]
	}
	return stats, true, nil
}

// NewTenantDocuments converts a store's TenantStats; the result is never
// nil, so that a store that lists tenants, none of them with due rows,
// shows an empty array rather than null.
func NewTenantDocuments(stats []outboxdriver.TenantStat) []TenantDocument {
	out := make([]TenantDocument, 0, len(stats))
	for _, s := range stats {
		out = append(out, TenantDocument{TenantID: s.TenantID, Due: s.Due, OldestDueAgeSeconds: s.OldestDueAge.Seconds()})
	}
	return out
}

// TenantLabel is how the tables show a tenant id: "-" for the rows without
// one, quoted when it holds a character a terminal would not print as it
// is (a row inserted with plain SQL may hold anything), clipped to one line.
func TenantLabel(id string) string {
	if id == "" {
		return "-"
	}
	for _, r := range id {
		if r == utf8.RuneError || (r != ' ' && !unicode.IsPrint(r)) {
			id = strconv.Quote(id)
			break
		}
	}
	return Clip(id, tenantWidth)
}

// TenantsTable renders the tenants with due rows, the longest waiting
// first, under a line that says what the list is; n is how many were asked
// for.
func TenantsTable(stats []outboxdriver.TenantStat, n int) []string {
	if len(stats) == 0 {
		return []string{"no tenant has due rows"}
	}
	head := fmt.Sprintf("tenants with due rows, the longest waiting first (at most %d, --tenants):", n)
	rows := [][]string{{"TENANT", "DUE", "OLDEST_DUE_AGE"}}
	for _, s := range stats {
		rows = append(rows, []string{TenantLabel(s.TenantID), strconv.FormatInt(s.Due, 10), FormatDuration(s.OldestDueAge)})
	}
	return append([]string{head}, Table(rows, 2)...)
}
