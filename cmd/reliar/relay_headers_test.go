package main

import (
	"net/http"
	"syscall"
	"testing"

	"github.com/reliar/reliar/publisher/natspub"
)

// TestRelayRenamesReservedHeadersOfPlainSQLRows: a row written by plain
// SQL may carry a user header in a CloudEvents namespace, which Enqueue
// refuses. The relay still delivers it, the header renamed out of the
// namespace so that no standard consumer drops the event, and never
// dead-letters it.
func TestRelayRenamesReservedHeadersOfPlainSQLRows(t *testing.T) {
	t.Parallel()
	db, js := newPG(t), newJetStream(t)
	db.migrate(t)
	var id string
	if err := db.pool.QueryRow(t.Context(), `INSERT INTO `+db.table()+` (id, message_type, payload, headers)
		VALUES (gen_random_uuid(), 'order_placed', convert_to('{}', 'UTF8'), '{"ce-my-ext": "a", "cloudEvents:foo": "b", "x-user": "c"}')
		RETURNING id::text`).Scan(&id); err != nil {
		t.Fatalf("insert: %v", err)
	}
	p := startRelay(t, relayArgs(db, js)...)
	p.waitReady(t, http.StatusOK)
	waitFor(t, "the row published", func() bool { return db.count(t, "published_at IS NOT NULL") == 1 })
	if n := db.count(t, "dead_at IS NOT NULL"); n != 0 {
		t.Fatalf("%d rows dead, want none", n)
	}
	m, err := js.stream.GetMsg(t.Context(), 1)
	if err != nil {
		t.Fatalf("get message: %v", err)
	}
	env, err := natspub.Envelope(m.Header, m.Data)
	if err != nil {
		t.Fatalf("Envelope: %v", err)
	}
	if env.ID.String() != id {
		t.Fatalf("received %s, want %s", env.ID, id)
	}
	want := map[string]string{"x-ce-my-ext": "a", "x-cloudevents-foo": "b", "x-user": "c"}
	for k, v := range want {
		if env.Headers[k] != v {
			t.Errorf("user header %s = %q, want %q (headers %v)", k, env.Headers[k], v, env.Headers)
		}
	}
	for k := range m.Header {
		if k == "ce-my-ext" || k == "cloudEvents:foo" {
			t.Errorf("the header %s went out in the CloudEvents namespace", k)
		}
	}
	if code, _ := p.stop(t, syscall.SIGTERM); code != 0 {
		t.Fatalf("exit %d after SIGTERM\n%s", code, p.stderr.String())
	}
}
