package pgstore

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/reliar/reliar/outbox/outboxdriver"
)

// fillTenants inserts, with plain SQL, rows pending for each tenant of
// counts (tenant "" writes NULL), the earlier tenants' rows due earlier.
func fillTenants(t testing.TB, s *Store, counts map[string]int, order []string) {
	t.Helper()
	for i, tenant := range order {
		var tid any
		if tenant != "" {
			tid = tenant
		}
		_, err := sharedPool.Exec(t.Context(), s.n.render(`INSERT INTO {{table}} (id, message_type, payload, tenant_id, available_at)
SELECT gen_random_uuid(), 'fair', '\x7b7d', $1::text, now() - interval '1 hour' + ($2::int * interval '1 second') + (g * interval '1 microsecond')
FROM generate_series(1, $3::int) AS g`), tid, i, counts[tenant])
		if err != nil {
			t.Fatal(err)
		}
	}
}

func tenantsOf(b outboxdriver.AcquiredBatch) map[string]int {
	got := map[string]int{}
	for _, r := range b.Records {
		got[r.Envelope.Metadata.TenantID]++
	}
	return got
}

// A tenant with one due row behind another tenant's backlog gets it in the
// next claim; the claim is shared round-robin.
func TestFairClaimSharesTheBatch(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	fillTenants(t, s, map[string]int{"big": 5000, "small": 1, "": 3, "mid": 4}, []string{"big", "mid", "", "small"})
	req := outboxdriver.AcquireRequest{Worker: "w", BatchSize: 12, Lease: time.Minute, MaxClaims: 5, Fairness: outboxdriver.FairnessTenant}
	b, err := s.Acquire(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	got := tenantsOf(b)
	want := map[string]int{"small": 1, "": 3, "mid": 4, "big": 4}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("claim took %v, want %v", got, want)
	}
	if !b.More {
		t.Error("More is false, but big has rows beyond its share")
	}
	// The round starts after the cursor "" (big, mid, small) and wraps
	// around to the tenant-less rows, "", the last one visited.
	if b.TenantCursor != "" {
		t.Errorf("cursor %q, want the last tenant visited, \"\"", b.TenantCursor)
	}
	req.TenantCursor = "mid"
	b, err = s.Acquire(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	// The round visits small, "", big and mid, whose rows but big's are
	// leased: big gets its share of four tenants, 6, and More says so.
	if got := tenantsOf(b); got["big"] != 6 || len(got) != 1 || b.TenantCursor != "mid" || !b.More {
		t.Errorf("second claim from cursor mid took %v, cursor %q, More %v; want 6 rows of big, cursor mid, More", got, b.TenantCursor, b.More)
	}
}

// Successive claims rotate through tenants: with more tenants than a claim
// holds, every tenant is served before any is served twice.
func TestFairClaimRotates(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	counts := map[string]int{}
	var order []string
	for i := range 7 {
		name := fmt.Sprintf("t%d", i)
		counts[name] = 3
		order = append(order, name)
	}
	fillTenants(t, s, counts, order)
	req := outboxdriver.AcquireRequest{Worker: "w", BatchSize: 3, Lease: time.Minute, MaxClaims: 5, Fairness: outboxdriver.FairnessTenant}
	seen := map[string]int{}
	var rounds []string
	for range 7 {
		b, err := s.Acquire(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		for tenant, n := range tenantsOf(b) {
			seen[tenant] += n
		}
		rounds = append(rounds, fmt.Sprint(tenantsOf(b)))
		req.TenantCursor = b.TenantCursor
	}
	for _, name := range order {
		if seen[name] != 3 {
			t.Fatalf("after 7 claims of 3 rows, tenant %s got %d rows, want 3: %v", name, seen[name], rounds)
		}
	}
}

// The per-tenant cap: a tenant at its cap gets nothing, one below it gets
// the difference.
func TestFairClaimHonoursTheTenantCap(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	fillTenants(t, s, map[string]int{"a": 50, "b": 50, "c": 50}, []string{"a", "b", "c"})
	req := outboxdriver.AcquireRequest{Worker: "w", BatchSize: 30, Lease: time.Minute, MaxClaims: 5, Fairness: outboxdriver.FairnessTenant,
		TenantCap: 5, TenantHeld: map[string]int{"a": 5, "b": 3}}
	b, err := s.Acquire(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	got := tenantsOf(b)
	if got["a"] != 0 || got["b"] != 2 || got["c"] != 5 {
		t.Fatalf("claim took %v, want a:0 b:2 c:5", got)
	}
	if b.More {
		t.Error("More is set, but only caps held rows back")
	}
}

// The fair claim walks outbox_tenant_pending_idx and never scans the table,
// with 10 and with 10,000 tenants holding due rows.
func TestFairClaimUsesTheTenantIndex(t *testing.T) {
	t.Parallel()
	for _, tenants := range []int{10, 10000} {
		s := newStore(t)
		_, err := sharedPool.Exec(t.Context(), s.n.render(`INSERT INTO {{table}} (id, message_type, payload, tenant_id, available_at, published_at)
SELECT gen_random_uuid(), 'fair', '\x7b7d', 'tenant-' || (g % $1::int), now() - (g * interval '1 millisecond'),
    CASE WHEN g % 4 = 0 THEN now() END
FROM generate_series(1, 100000) AS g`), tenants)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sharedPool.Exec(t.Context(), s.n.render(`ANALYZE {{table}}`)); err != nil {
			t.Fatal(err)
		}
		plan := explain(t, sharedPool, "EXPLAIN "+s.sql.claimFair, 512, "w", int64(30e6), int32(5), "", int32(0), []string{}, []int32{})
		if !strings.Contains(plan, "outbox_tenant_pending_idx") || strings.Contains(plan, "Seq Scan") {
			t.Errorf("%d tenants: the fair claim does not walk the tenant index:\n%s", tenants, plan)
		}
		b, err := s.Acquire(t.Context(), outboxdriver.AcquireRequest{Worker: "w", BatchSize: 512, Lease: time.Minute, MaxClaims: 5, Fairness: outboxdriver.FairnessTenant})
		if err != nil {
			t.Fatal(err)
		}
		if len(b.Records) != 512 || len(tenantsOf(b)) != min(tenants, 512) {
			t.Errorf("%d tenants: claimed %d rows of %d tenants", tenants, len(b.Records), len(tenantsOf(b)))
		}
	}
}
