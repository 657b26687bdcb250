package promobs_test

import (
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/reliar/reliar/observability/promobs"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

func TestTenantsSetsAndDropsPerTenantGauges(t *testing.T) {
	t.Parallel()
	m, reg := newMetrics(t)
	if n := seriesCount(t, reg, "reliar_outbox_tenant_due"); n != 0 {
		t.Fatalf("tenant_due series before Tenants = %d, want 0", n)
	}
	m.Tenants([]outboxdriver.TenantStat{
		{TenantID: "acme", Due: 7, OldestDueAge: 90 * time.Second},
		{TenantID: "", Due: 2, OldestDueAge: 1500 * time.Millisecond},
	})
	for _, c := range []struct {
		tenant   string
		due, age float64
	}{{"acme", 7, 90}, {"", 2, 1.5}} {
		l := map[string]string{"tenant_id": c.tenant}
		if got := value(t, reg, "reliar_outbox_tenant_due", l); got != c.due {
			t.Errorf("tenant_due%v = %v, want %v", l, got, c.due)
		}
		if got := value(t, reg, "reliar_outbox_tenant_oldest_due_age_seconds", l); got != c.age {
			t.Errorf("tenant_oldest_due_age_seconds%v = %v, want %v", l, got, c.age)
		}
	}

	// acme's backlog is gone: its series go, the others stay.
	m.Tenants([]outboxdriver.TenantStat{{TenantID: "globex", Due: 1, OldestDueAge: time.Second}, {TenantID: "", Due: 3}})
	for _, name := range []string{"reliar_outbox_tenant_due", "reliar_outbox_tenant_oldest_due_age_seconds"} {
		if n := seriesCount(t, reg, name); n != 2 {
			t.Errorf("%s series = %d, want 2 (globex and no tenant)", name, n)
		}
	}
	if got := value(t, reg, "reliar_outbox_tenant_due", map[string]string{"tenant_id": ""}); got != 3 {
		t.Errorf("tenant_due without tenant = %v, want 3", got)
	}
	for _, f := range families(t, reg)["reliar_outbox_tenant_due"].GetMetric() {
		if hasLabels(f, map[string]string{"tenant_id": "acme"}) {
			t.Fatal("tenant_due still has acme's series after it left the list")
		}
	}

	m.Tenants(nil)
	if n := seriesCount(t, reg, "reliar_outbox_tenant_due"); n != 0 {
		t.Fatalf("tenant_due series after an empty list = %d, want 0", n)
	}
}

func TestTenantsLabelNotUTF8(t *testing.T) {
	t.Parallel()
	m, reg := newMetrics(t)
	m.Tenants([]outboxdriver.TenantStat{{TenantID: "bad\xff", Due: 1}})
	if got := value(t, reg, "reliar_outbox_tenant_due", map[string]string{"tenant_id": "bad\uFFFD"}); got != 1 {
		t.Fatalf("tenant_due for a tenant id that is not UTF-8 = %v, want 1", got)
	}
}

func TestConstLabelTenantIDRefused(t *testing.T) {
	t.Parallel()
	_, err := promobs.New(prometheus.NewRegistry(), promobs.WithConstLabels(prometheus.Labels{"tenant_id": "x"}))
	if !errors.Is(err, promobs.ErrInvalidOption) {
		t.Fatalf("New with constant label tenant_id = %v, want ErrInvalidOption", err)
	}
}
