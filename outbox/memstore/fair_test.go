package memstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

type tenantOrder struct{ N int }

func (tenantOrder) MessageType() string { return "memstore.tenant" }

// TestFairClaimEdges covers what the conformance suite leaves out: a fair
// claim that asks for nothing or finds no tenant keeps the cursor, and
// fairness with per-key ordering is refused.
func TestFairClaimEdges(t *testing.T) {
	ctx := context.Background()
	s := newMemStore()
	fair := func(batch int, cursor string) outboxdriver.AcquiredBatch {
		t.Helper()
		b, err := s.Acquire(ctx, outboxdriver.AcquireRequest{Worker: "w", BatchSize: batch, Lease: time.Minute,
			Fairness: outboxdriver.FairnessTenant, TenantCursor: cursor})
		if err != nil {
			t.Fatalf("Acquire: %v", err)
		}
		return b
	}
	if b := fair(10, "t5"); b.TenantCursor != "t5" || b.More || b.Len() != 0 {
		t.Fatalf("claim of an empty store: cursor %q more %v len %d; want the cursor kept, nothing else", b.TenantCursor, b.More, b.Len())
	}
	m := reliar.NewMsg(tenantOrder{N: 1})
	m.Metadata.TenantID = "t1"
	if _, err := s.Enqueue(ctx, m); err != nil {
		t.Fatal(err)
	}
	if b := fair(0, "t5"); b.TenantCursor != "t5" || b.Len() != 0 {
		t.Fatalf("claim of 0: cursor %q len %d; want the cursor kept", b.TenantCursor, b.Len())
	}
	if b := fair(10, "t5"); b.TenantCursor != "t1" || b.Len() != 1 || b.More {
		t.Fatalf("claim of the one row: cursor %q len %d more %v; want t1, 1, false", b.TenantCursor, b.Len(), b.More)
	}
	// t1's row is leased: t1 is still a tenant with a pending row.
	if b := fair(10, "t1"); b.TenantCursor != "t1" || b.Len() != 0 {
		t.Fatalf("claim with t1's row leased: cursor %q len %d; want t1 visited, nothing claimed", b.TenantCursor, b.Len())
	}
	_, err := s.Acquire(ctx, outboxdriver.AcquireRequest{Worker: "w", BatchSize: 10, Lease: time.Minute,
		Fairness: outboxdriver.FairnessTenant, Ordering: outboxdriver.PerKey})
	if err == nil {
		t.Fatal("a fair claim with per-key ordering was accepted")
	}
	if !s.Capabilities().TenantFairness {
		t.Fatal("memstore does not report the TenantFairness capability")
	}
}
