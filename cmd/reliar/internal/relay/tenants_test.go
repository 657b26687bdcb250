package relay

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/reliar/reliar/observability/promobs"
	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/store/pgstore"
)

// TestTenantPollerFeedsPerTenantGauges: the poller reads a PostgreSQL
// table's due rows by tenant into the per-tenant gauges, and drops a tenant
// whose backlog is gone.
func TestTenantPollerFeedsPerTenantGauges(t *testing.T) {
	s := newSchema(t)
	s.migrate(t)
	store, err := pgstore.New(t.Context(), s.pool, pgstore.WithSchema(s.name), pgstore.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewPedanticRegistry()
	m, err := promobs.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Settings: outbox.DefaultSettings()}
	p := newTenantPoller(cfg, store, m.Tenants, quiet)
	if p == nil {
		t.Fatal("no tenant poller over a PostgreSQL store")
	}
	s.exec(t, `INSERT INTO `+s.table()+` (id, message_type, payload, tenant_id, available_at)
		SELECT gen_random_uuid(), 'order_placed', '\x7b7d', 'acme', now() - interval '1 hour' FROM generate_series(1, 3)`)
	s.exec(t, `INSERT INTO `+s.table()+` (id, message_type, payload, tenant_id) VALUES (gen_random_uuid(), 'order_placed', '\x7b7d', 'globex')`)
	p.once(t.Context())
	want := `
# HELP reliar_outbox_tenant_due Rows claimable now, by tenant, for the tenants whose due rows have waited longest (Tenants).
# TYPE reliar_outbox_tenant_due gauge
reliar_outbox_tenant_due{tenant_id="acme"} 3
reliar_outbox_tenant_due{tenant_id="globex"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "reliar_outbox_tenant_due"); err != nil {
		t.Fatal(err)
	}
	age := tenantGauge(t, reg, "reliar_outbox_tenant_oldest_due_age_seconds", "acme")
	if age < 3500 || age > 3700 {
		t.Fatalf("acme's oldest due age = %vs, want about an hour", age)
	}

	s.exec(t, `DELETE FROM `+s.table()+` WHERE tenant_id = 'acme'`)
	p.once(t.Context())
	want = `
# HELP reliar_outbox_tenant_due Rows claimable now, by tenant, for the tenants whose due rows have waited longest (Tenants).
# TYPE reliar_outbox_tenant_due gauge
reliar_outbox_tenant_due{tenant_id="globex"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "reliar_outbox_tenant_due"); err != nil {
		t.Fatal(err)
	}
}

// TestTenantPollerOff: no poller when the stats are off.
func TestTenantPollerOff(t *testing.T) {
	s := newSchema(t)
	s.migrate(t)
	store, err := pgstore.New(t.Context(), s.pool, pgstore.WithSchema(s.name), pgstore.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Settings: outbox.DefaultSettings()}
	cfg.Settings.StatsInterval = outbox.Off
	if p := newTenantPoller(cfg, store, nil, quiet); p != nil {
		t.Fatal("a tenant poller with the stats off")
	}
}

// tenantGauge returns the value of family name's series for tenant.
func tenantGauge(t *testing.T, reg *prometheus.Registry, name, tenant string) float64 {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, mt := range f.GetMetric() {
			for _, l := range mt.GetLabel() {
				if l.GetName() == "tenant_id" && l.GetValue() == tenant {
					return mt.GetGauge().GetValue()
				}
			}
		}
	}
	t.Fatalf("%s has no series for tenant %q", name, tenant)
	return 0
}
