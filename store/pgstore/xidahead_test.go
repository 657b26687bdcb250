package pgstore

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reliar/reliar/outbox/outboxdriver"
)

// Rows restored from another cluster keep their xid: written here by raw
// SQL, as a restore writes them, a million ids ahead of this cluster. A
// per-key claim passes over such a row and every later row of its key;
// XIDAhead counts them, and RepairXIDs makes them claimable in order.
func TestXIDAheadAndRepair(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := newStore(t)
	ahead := `(pg_current_xact_id()::text::int8 + 1000000)::text::xid8`
	err := settled(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, s.n.render(`INSERT INTO {{table}} (id, message_type, payload, ordering_key, available_at, dead_at, dead_reason, xid) VALUES
('00000000-0000-7000-8000-000000000001', 'k1-first', '{}', 'k1', now(), NULL, NULL, DEFAULT),
('00000000-0000-7000-8000-000000000002', 'k1-restored', '{}', 'k1', now(), NULL, NULL, `+ahead+`),
('00000000-0000-7000-8000-000000000003', 'k1-after', '{}', 'k1', now(), NULL, NULL, DEFAULT),
('00000000-0000-7000-8000-000000000004', 'k2-later', '{}', 'k2', now() + interval '1 hour', NULL, NULL, `+ahead+`),
('00000000-0000-7000-8000-000000000005', 'unkeyed', '{}', NULL, now(), NULL, NULL, `+ahead+`),
('00000000-0000-7000-8000-000000000006', 'dead', '{}', 'k3', now(), now(), 'permanent', `+ahead+`)`))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}

	x, err := s.XIDAhead(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if x.Rows != 3 || x.Keys != 2 || x.BlockedDue != 2 || !slices.Equal(x.Sample, []string{"k1", "k2"}) ||
		x.MaxAhead < 999_000 || x.MaxAhead > 1_000_000 || x.Oldest < 0 || x.Oldest > time.Minute {
		t.Fatalf("XIDAhead = %+v; want 3 rows, keys k1 and k2, 2 due rows blocked, about 1000000 ahead", x)
	}

	claimTypes := func() []string {
		t.Helper()
		b, err := s.Acquire(ctx, outboxdriver.AcquireRequest{Worker: "w", BatchSize: 10, Lease: time.Minute, Ordering: outboxdriver.PerKey})
		if err != nil {
			t.Fatal(err)
		}
		var types []string
		var leases []outboxdriver.Lease
		for _, r := range b.Records {
			types = append(types, r.Envelope.MessageType)
			leases = append(leases, r.Lease())
		}
		if _, err := s.Complete(ctx, leases); err != nil {
			t.Fatal(err)
		}
		slices.Sort(types)
		return types
	}
	// The head of k1 and the unkeyed row go; the restored row of k1, and
	// the row after it, stay behind however often the claim runs.
	if got := claimTypes(); !slices.Equal(got, []string{"k1-first", "unkeyed"}) {
		t.Fatalf("first per-key claim took %v; want k1-first and unkeyed", got)
	}
	if got := claimTypes(); len(got) != 0 {
		t.Fatalf("second per-key claim took %v; want nothing (k1 blocked by its restored row)", got)
	}

	n, err := s.RepairXIDs(ctx, 1) // one row a statement: the loop ends
	if err != nil || n != 3 {
		t.Fatalf("RepairXIDs = %d, %v; want the 3 unpublished rows ahead (k1-restored, k2-later, dead)", n, err)
	}
	if x, err := s.XIDAhead(ctx); err != nil || x.Rows != 0 || x.Keys != 0 || x.BlockedDue != 0 || len(x.Sample) != 0 {
		t.Fatalf("after the repair: %+v, %v; want nothing ahead", x, err)
	}
	if n, err := s.RepairXIDs(ctx, 0); err != nil || n != 0 {
		t.Fatalf("RepairXIDs again = %d, %v; want 0", n, err)
	}
	// The repair's transaction settles like any other; then k1 goes on in
	// sequence order.
	var newest string
	if err := sharedPool.QueryRow(ctx, s.n.render(`SELECT max(xid::text::int8)::text FROM {{table}} WHERE published_at IS NULL`)).Scan(&newest); err != nil {
		t.Fatal(err)
	}
	if err := awaitSettled(ctx, newest); err != nil {
		t.Fatal(err)
	}
	if got := claimTypes(); !slices.Equal(got, []string{"k1-restored"}) {
		t.Fatalf("claim after the repair took %v; want k1-restored", got)
	}
	if got := claimTypes(); !slices.Equal(got, []string{"k1-after"}) {
		t.Fatalf("next claim took %v; want k1-after", got)
	}
	var deadAhead bool
	if err := sharedPool.QueryRow(context.WithoutCancel(ctx), s.n.render(`SELECT xid >= pg_snapshot_xmax(pg_current_snapshot()) FROM {{table}} WHERE message_type = 'dead'`)).Scan(&deadAhead); err != nil || deadAhead {
		t.Fatalf("the dead row is still ahead (%v, %v): a retry would block its key again", deadAhead, err)
	}
}
