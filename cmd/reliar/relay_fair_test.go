package main

import (
	"net/http"
	"strings"
	"syscall"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
)

// fairBacklog is the big tenant's backlog in TestRelayFairTenant.
const fairBacklog = 20_000

// TestRelayFairTenant: behind a backlog of one tenant inserted with plain
// SQL, a relay with --fair tenant publishes another tenant's messages,
// committed once the backlog drains, before the backlog is gone: when the
// last of the small tenant's messages is published, some of the big
// tenant's rows are still waiting.
func TestRelayFairTenant(t *testing.T) {
	t.Parallel()
	db, js := newPG(t), newJetStream(t)
	db.migrate(t)
	if _, err := db.pool.Exec(t.Context(), `INSERT INTO `+db.table()+` (id, message_type, payload, tenant_id)
		SELECT gen_random_uuid(), 'big_import', convert_to(format('{"n":%s}', i), 'UTF8'), 'big' FROM generate_series(1, $1) AS i`, fairBacklog); err != nil {
		t.Fatal(err)
	}
	p := startRelay(t, relayArgs(db, js, "--fair", "tenant")...)
	waitFor(t, "the big tenant's backlog to start draining", func() bool { return db.count(t, "tenant_id = 'big' AND published_at IS NOT NULL") > 0 })

	if _, err := db.pool.Exec(t.Context(), `INSERT INTO `+db.table()+` (id, message_type, payload, tenant_id)
		SELECT gen_random_uuid(), 'small_order', convert_to(format('{"n":%s}', i), 'UTF8'), 'small' FROM generate_series(1, 20) AS i`); err != nil {
		t.Fatal(err)
	}
	// One statement counts both tenants, so the two counts are of one
	// moment; the big tenant's count is at least what it was when the last
	// small message was published.
	var small, big int
	waitFor(t, "the small tenant's 20 messages published", func() bool {
		if err := db.pool.QueryRow(t.Context(), `SELECT
			count(*) FILTER (WHERE tenant_id = 'small' AND published_at IS NOT NULL),
			count(*) FILTER (WHERE tenant_id = 'big' AND published_at IS NOT NULL) FROM `+db.table()).Scan(&small, &big); err != nil {
			t.Fatal(err)
		}
		return small == 20
	})
	t.Logf("the small tenant's 20 messages were published with %d of the big tenant's %d", big, fairBacklog)
	if big >= fairBacklog {
		t.Errorf("the small tenant's messages were published after the whole backlog (%d rows): the claims are not fair", big)
	}
	info, err := js.stream.Info(t.Context(), jetstream.WithSubjectFilter(js.prefix+".small_order"))
	if err != nil {
		t.Fatal(err)
	}
	if n := info.State.Subjects[js.prefix+".small_order"]; n != 20 {
		t.Errorf("the stream holds %d of the small tenant's messages, want 20", n)
	}

	if !strings.Contains(p.stderr.String(), "fair=tenant") {
		t.Errorf("the start-up line does not say fair=tenant:\n%s", p.stderr.String())
	}
	p.waitReady(t, http.StatusOK)
	waitFor(t, "the whole backlog published", func() bool { return db.count(t, "published_at IS NOT NULL") == fairBacklog+20 })
	if code, _ := p.stop(t, syscall.SIGTERM); code != 0 {
		t.Fatalf("exit %d after SIGTERM, want 0", code)
	}
}
