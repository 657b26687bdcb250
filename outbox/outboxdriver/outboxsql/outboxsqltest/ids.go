package outboxsqltest

import (
	"strings"
	"testing"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// ForeignIDs checks ids that another program wrote with a plain INSERT in a
// form other than the canonical lower-case UUID (upper case, as some
// languages print them; no hyphens; braces). The store either refuses such an
// insert, or stores the id so that the claimed row's outcome write finds it:
// a row whose Complete matches nothing would be published again at every
// lease and finally dead-lettered. A form the store cannot normalise may
// instead be claimed as poison (dead, undecodable), never handed out.
func (tg Target[T]) ForeignIDs(t *testing.T) {
	forms := []struct {
		name string
		form func(reliar.MessageID) string
	}{
		{"upper case", func(id reliar.MessageID) string { return strings.ToUpper(id.String()) }},
		{"mixed case", func(id reliar.MessageID) string {
			s := []byte(id.String())
			for i := 0; i < len(s); i += 2 {
				s[i] = strings.ToUpper(string(s[i]))[0]
			}
			return string(s)
		}},
		{"no hyphens", func(id reliar.MessageID) string { return strings.ReplaceAll(id.String(), "-", "") }},
		{"upper case without hyphens", func(id reliar.MessageID) string {
			return strings.ToUpper(strings.ReplaceAll(id.String(), "-", ""))
		}},
		{"braces", func(id reliar.MessageID) string { return "{" + id.String() + "}" }},
	}
	for _, tt := range forms {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			s := tg.New(t)
			id := reliar.NewMessageID()
			_, err := s.DB().ExecContext(ctx,
				`INSERT INTO outbox (id, message_type, payload) VALUES (?, 'foreign.id', ?)`, tt.form(id), []byte(`{}`))
			refused := err != nil
			good := NewMsgs(1)
			if err := Enqueue(ctx, s, good...); err != nil {
				t.Fatal(err)
			}
			b, err := s.Acquire(ctx, AcquireRequest(10))
			if err != nil {
				t.Fatalf("Acquire: %v", err)
			}
			want := 2
			if refused {
				want = 1
			}
			if b.Len() != want {
				t.Fatalf("claim consumed %d rows (records %d, poisoned %+v), want %d", b.Len(), len(b.Records), b.Poisoned, want)
			}
			leases := make([]outboxdriver.Lease, len(b.Records))
			for i, r := range b.Records {
				leases[i] = r.Lease()
				if r.Envelope.ID != id && r.Envelope.ID != good[0].ID {
					t.Errorf("claimed %s, neither the foreign row %s nor the good row", r.Envelope.ID, id)
				}
			}
			if n, err := s.Complete(ctx, leases); err != nil || n != int64(len(leases)) {
				t.Fatalf("Complete of %d claimed rows = %d, %v: an outcome write missed a row", len(leases), n, err)
			}
			st, err := s.Stats(ctx)
			if err != nil || st.Pending != 0 {
				t.Fatalf("Stats after the outcomes = %+v, %v; want nothing pending", st, err)
			}
			for _, p := range b.Poisoned {
				if p.Error == "" {
					t.Errorf("poisoned %s without a reason", p.ID)
				}
			}
		})
	}
}
