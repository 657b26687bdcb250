package pgstore

import (
	"testing"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// The send time of a message whose producer left it unset is the row's
// created_at, whoever wrote the row: Enqueue (which stores no metadata
// document for a plain message), or another language's plain INSERT of
// id, message_type and payload. A send time the caller set is kept. The
// CloudEvents time follows.
func TestSendTimeIsCreatedAtUnlessSet(t *testing.T) {
	s := newStore(t)
	ctx := t.Context()
	set := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	withSent := reliar.NewMsg(orderPlaced{OrderID: "set"})
	withSent.Metadata.Delivery.SentAt = &set
	plain := reliar.NewMsg(orderPlaced{OrderID: "plain"})
	enqueue(t, s, plain, withSent)
	raw := reliar.NewMessageID()
	if _, err := sharedPool.Exec(ctx, s.n.render(`INSERT INTO {{table}} (id, message_type, payload)
		VALUES ($1, 'orders.placed', convert_to('{"order_id":"raw"}', 'UTF8'))`), raw); err != nil {
		t.Fatal(err)
	}
	var docs int
	if err := sharedPool.QueryRow(ctx, s.n.render(`SELECT count(*) FROM {{table}} WHERE id = $1 AND metadata IS NOT NULL`), plain.ID).Scan(&docs); err != nil {
		t.Fatal(err)
	}
	if docs != 0 {
		t.Error("a plain message was stored with a metadata document")
	}
	b, err := s.Acquire(ctx, outboxdriver.AcquireRequest{Worker: "w", BatchSize: 10, Lease: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Records) != 3 {
		t.Fatalf("claimed %d rows, want 3", len(b.Records))
	}
	for _, r := range b.Records {
		env := r.Envelope
		var created time.Time
		if err := sharedPool.QueryRow(ctx, s.n.render(`SELECT created_at FROM {{table}} WHERE id = $1`), env.ID).Scan(&created); err != nil {
			t.Fatal(err)
		}
		want := created
		if env.ID == withSent.ID {
			want = set
		}
		got := env.Metadata.Delivery.SentAt
		if got == nil || !got.Equal(want) {
			t.Errorf("%s: SentAt = %v, want %v", env.ID, got, want)
		}
		if h := reliar.CloudEventHeaders(&env)[reliar.HeaderTime]; h != want.UTC().Format(time.RFC3339Nano) {
			t.Errorf("%s: CloudEvents time %q, want %s", env.ID, h, want.UTC().Format(time.RFC3339Nano))
		}
	}
}
