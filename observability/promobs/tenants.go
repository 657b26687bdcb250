package promobs

import "github.com/reliar/reliar/outbox/outboxdriver"

// Tenants replaces the per-tenant gauges, tenant_due and
// tenant_oldest_due_age_seconds, with stats: one series per tenant listed,
// labelled tenant_id, and none for a tenant no longer listed. Pass what a
// store's TenantStats returned (outboxdriver.TenantStatser): the tenants
// whose due rows have waited longest, capped by its limit, which bounds the
// series. The rows without a tenant are labelled with an empty tenant_id,
// which Prometheus stores as a series without the label.
func (m *Metrics) Tenants(stats []outboxdriver.TenantStat) {
	m.tenantMu.Lock()
	defer m.tenantMu.Unlock()
	listed := make(map[string]struct{}, len(stats))
	for _, s := range stats {
		id := labelValue(s.TenantID)
		listed[id] = struct{}{}
		m.tenantDue.WithLabelValues(id).Set(float64(s.Due))
		m.tenantOldestDueAge.WithLabelValues(id).Set(s.OldestDueAge.Seconds())
	}
	// Deleted one by one rather than Reset first, so that a scrape never
	// sees the tenants that are still listed missing.
	for id := range m.tenants {
		if _, ok := listed[id]; !ok {
			m.tenantDue.DeleteLabelValues(id)
			m.tenantOldestDueAge.DeleteLabelValues(id)
		}
	}
	m.tenants = listed
}
