package relay

import (
	"strings"
	"testing"
	"time"

	"github.com/reliar/reliar/cmd/reliar/internal/broker"
	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/store/pgstore"
)

// Rows restored from another cluster carry an xid ahead of this one's
// counter: written here by raw SQL, as a restore writes them. A per-key
// relay warns, exports them as gauges, publishes the rest, and publishes
// them too once they are repaired.
func TestRunRowsAheadOfTheXIDCounter(t *testing.T) {
	s := newSchema(t)
	s.migrate(t)
	prefix := randomName("relay_unit_")
	count := newStream(t, prefix)
	s.exec(t, `INSERT INTO `+s.table()+` (id, message_type, payload, ordering_key, xid) VALUES
(gen_random_uuid(), 'restored', '\x7b7d', 'customer-7', (pg_current_xact_id()::text::int8 + 1000000)::text::xid8),
(gen_random_uuid(), 'after', '\x7b7d', 'customer-7', DEFAULT),
(gen_random_uuid(), 'plain', '\x7b7d', NULL, DEFAULT),
(gen_random_uuid(), 'plain', '\x7b7d', NULL, DEFAULT),
(gen_random_uuid(), 'other_key', '\x7b7d', 'customer-8', DEFAULT)`)

	logs := &logBuffer{}
	cfg := testConfig(t, s, natsURL, broker.Options{SubjectPrefix: prefix})
	cfg.Settings.Ordering = outbox.PerKey
	cfg.InspectInterval = 100 * time.Millisecond
	cfg.Logger = logs.logger()
	r := start(t, cfg)
	eventually(t, "the 3 rows not held back", func() bool { return count() == 3 })
	eventually(t, "the gauges", func() bool {
		_, body := r.get(t, "/metrics")
		return strings.Contains(body, "reliar_outbox_xid_ahead_rows 1\n") && strings.Contains(body, "reliar_outbox_xid_ahead_keys 1\n")
	})
	if !logs.has("WARN", "ahead of this database's counter", "rows=1", "keys=1", "due_rows_blocked=2", "customer-7", "reliar repair xids") {
		t.Fatalf("no warning about the restored row in:\n%s", logs)
	}

	store, err := pgstore.New(t.Context(), s.pool, pgstore.WithSchema(s.name), pgstore.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	if n, err := store.RepairXIDs(t.Context(), 0); err != nil || n != 1 {
		t.Fatalf("RepairXIDs = %d, %v; want 1", n, err)
	}
	eventually(t, "all 5 rows", func() bool { return count() == 5 })
	eventually(t, "the gauges back at 0", func() bool {
		_, body := r.get(t, "/metrics")
		return strings.Contains(body, "reliar_outbox_xid_ahead_rows 0\n") && strings.Contains(body, "reliar_outbox_xid_ahead_keys 0\n")
	})
	eventually(t, "the all-clear", func() bool { return logs.has("INFO", "no outbox row is ahead of the xid counter") })
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
}
