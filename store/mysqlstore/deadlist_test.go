package mysqlstore_test

import (
	"runtime"
	"testing"

	"github.com/reliar/reliar/outbox/outboxdriver"
	"github.com/reliar/reliar/store/mysqlstore"
)

// TestListDeadBoundedWhateverTheRowsHold writes dead rows with plain SQL, as
// another language would: 4 MiB payloads, metadata and headers of 1 MiB,
// and last_error as long as its TEXT column allows. A page of them
// allocates a small fraction of that: the listing reads no payload and caps
// the rest in its SQL.
func TestListDeadBoundedWhateverTheRowsHold(t *testing.T) {
	db, _ := newDB(t)
	s, err := mysqlstore.New(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if _, err := db.ExecContext(t.Context(), `INSERT INTO outbox
			(id, message_type, payload, metadata, headers, metadata_version, dead_at, dead_reason, last_error, tenant_id)
			VALUES (UUID(), 'huge', REPEAT('p', 4194304),
			        JSON_OBJECT('routing', JSON_OBJECT('source', REPEAT('m', 1048576))),
			        JSON_OBJECT('big', REPEAT('h', 1048576)), 1,
			        UTC_TIMESTAMP(6), 'permanent', REPEAT('é', 30000), 'acme')`); err != nil {
			t.Fatal(err)
		}
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	page, err := s.ListDead(t.Context(), outboxdriver.DeadQuery{Limit: 20})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Records) != 5 {
		t.Fatalf("%d records, %d poisoned; want 5 records", len(page.Records), len(page.Poisoned))
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4<<20 {
		t.Errorf("ListDead allocated %d KiB for rows of 7 MiB each", alloc>>10)
	}
	for _, r := range page.Records {
		if len(r.Envelope.Payload) != 0 || r.PayloadSize != 4<<20 || len(r.LastError) > outboxdriver.ListedLastErrorBytes ||
			!r.LastErrorCut || !r.MetadataCut || !r.HeadersCut || r.Envelope.Metadata.TenantID != "acme" {
			t.Fatalf("record: payload %d bytes of %d, last_error %d bytes, cut %t/%t/%t, tenant %q", len(r.Envelope.Payload), r.PayloadSize,
				len(r.LastError), r.MetadataCut, r.HeadersCut, r.LastErrorCut, r.Envelope.Metadata.TenantID)
		}
	}
}
