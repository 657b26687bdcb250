package outboxsqltest

import (
	"strings"
	"testing"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// PoisonRows checks that rows another program wrote badly are moved to dead
// as undecodable while the rest of the batch goes on, and that ListDead
// reports them as poisoned.
func (tg Target[T]) PoisonRows(t *testing.T) {
	tests := []struct {
		name   string
		column string // the column set to value on the poison row
		value  any
		reason string
	}{
		{"bad metadata JSON", "metadata", "{not json", "metadata"},
		{"unknown metadata version", "metadata_version", 99, "metadata_version"},
		{"headers not a string map", "headers", `{"a":1}`, "headers"},
		{"conversation id not a UUID", "conversation_id", "not-a-uuid", "conversation_id"},
		{"causation id not a UUID", "causation_id", "zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz", "causation_id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			s := tg.New(t)
			id := reliar.NewMessageID()
			if _, err := s.DB().ExecContext(ctx,
				`INSERT INTO outbox (id, message_type, payload, `+tt.column+`) VALUES (?, 'x', x'7b7d', ?)`,
				id.String(), tt.value); err != nil {
				t.Fatal(err)
			}
			good := NewMsgs(1)
			if err := Enqueue(ctx, s, good...); err != nil {
				t.Fatal(err)
			}
			b, err := s.Acquire(ctx, AcquireRequest(10))
			if err != nil {
				t.Fatal(err)
			}
			if len(b.Records) != 1 || b.Records[0].Envelope.ID != good[0].ID {
				t.Fatalf("records %+v, want the good row", b.Records)
			}
			if len(b.Poisoned) != 1 || b.Poisoned[0].ID != id || !strings.Contains(b.Poisoned[0].Error, tt.reason) {
				t.Fatalf("poisoned %+v, want %s for %s", b.Poisoned, tt.reason, id)
			}
			st, err := tg.Inspect(ctx, s.DB(), id)
			if err != nil {
				t.Fatal(err)
			}
			if st.DeadReason == nil || *st.DeadReason != string(outboxdriver.DeadUndecodable) ||
				st.LastError == nil || *st.LastError == "" || st.LeaseToken != nil || st.Attempts != 0 {
				t.Fatalf("poison row state %+v", st)
			}
			page, err := s.ListDead(ctx, outboxdriver.DeadQuery{Limit: 1})
			if err != nil {
				t.Fatal(err)
			}
			if len(page.Poisoned) != 1 || len(page.Records) != 0 || page.NextAfterSequence == nil ||
				*page.NextAfterSequence != st.Sequence {
				t.Fatalf("ListDead: %+v", page)
			}
		})
	}
}
