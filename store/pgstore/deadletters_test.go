package pgstore

import (
	"runtime"
	"testing"

	"github.com/reliar/reliar/outbox/outboxdriver"
)

// TestListDeadBoundedWhateverTheRowsHold writes dead rows the way another
// language would, with plain SQL: 16 MiB payloads, and metadata, headers and
// last_error of 2 MiB each. A page of them allocates a small fraction of
// that: the listing reads no payload and caps the rest in its SQL.
//
// It does not run in parallel: it measures the process's allocations.
func TestListDeadBoundedWhateverTheRowsHold(t *testing.T) {
	s := newStore(t)
	ctx := t.Context()
	const rows, payload, doc = 6, 16 << 20, 2 << 20
	if _, err := sharedPool.Exec(ctx, s.n.render(`INSERT INTO {{table}}
		(id, message_type, payload, metadata, headers, metadata_version, dead_at, dead_reason, last_error, tenant_id)
		SELECT gen_random_uuid(), 'huge', convert_to(repeat('p', $1), 'UTF8'),
		       jsonb_build_object('routing', jsonb_build_object('source', repeat('m', $2))),
		       jsonb_build_object('big', repeat('h', $2)), 1,
		       now(), 'permanent', repeat('é', $2), 'acme'
		FROM generate_series(1, $3)`), payload, doc, rows); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	page, err := s.ListDead(ctx, outboxdriver.DeadQuery{Limit: 20})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Records) != rows {
		t.Fatalf("%d records, %d poisoned; want %d records", len(page.Records), len(page.Poisoned), rows)
	}
	// The rows hold 120 MiB; allow for background goroutines.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Errorf("ListDead allocated %d MiB for %d rows", alloc>>20, rows)
	}
	for _, r := range page.Records {
		if len(r.Envelope.Payload) != 0 || len(r.LastError) > 2<<10 || r.Envelope.Metadata.TenantID != "acme" || r.Envelope.MessageType != "huge" {
			t.Fatalf("record: payload %d bytes, last_error %d bytes, tenant %q, type %q", len(r.Envelope.Payload), len(r.LastError), r.Envelope.Metadata.TenantID, r.Envelope.MessageType)
		}
	}
}
