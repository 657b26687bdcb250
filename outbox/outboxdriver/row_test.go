package outboxdriver

import (
	"testing"
	"time"

	"github.com/reliar/reliar"
)

type rowTestMsg struct{ N int }

func (rowTestMsg) MessageType() string { return "row.test" }

// A message whose send time the caller left unset is stored without a
// metadata document: the row's created_at, written by the store's clock, is
// its send time, and the server parses no JSON for it.
func TestNewRowLeavesUnsetSendTimeToCreatedAt(t *testing.T) {
	ctx := t.Context()
	created := time.Date(2026, 12, 2, 4, 0, 0, 123456000, time.UTC)
	sent := time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)
	tests := []struct {
		name     string
		msg      reliar.Outgoing
		wantDoc  string // "" means NULL
		wantSent time.Time
	}{
		{name: "plain message", msg: reliar.NewMsg(rowTestMsg{N: 1}), wantSent: created},
		{name: "send time set by the caller", msg: func() reliar.Outgoing {
			o := reliar.NewMsg(rowTestMsg{N: 2})
			o.Metadata.Delivery.SentAt = &sent
			return o
		}(), wantDoc: `{"delivery":{"sent_at":"2026-12-01T09:30:00Z"}}`, wantSent: sent},
		{name: "routing but no send time", msg: func() reliar.Outgoing {
			o := reliar.NewMsg(rowTestMsg{N: 3})
			o.Metadata.Routing.Source = "orders"
			return o
		}(), wantDoc: `{"routing":{"source":"orders"}}`, wantSent: created},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := NewRow(ctx, tt.msg, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			if got := string(r.Metadata); got != tt.wantDoc {
				t.Fatalf("metadata document = %q, want %q", got, tt.wantDoc)
			}
			if r.Metadata == nil && tt.wantDoc == "" && r.MetadataVersion == nil {
				t.Fatal("metadata_version is unset")
			}
			r.CreatedAt = created
			env, err := r.Envelope()
			if err != nil {
				t.Fatal(err)
			}
			got := env.Metadata.Delivery.SentAt
			if got == nil || !got.Equal(tt.wantSent) {
				t.Fatalf("envelope send time = %v, want %v", got, tt.wantSent)
			}
		})
	}
}

// A row with neither a send time in its document nor a creation time (a
// store that reads no created_at) keeps the send time unset rather than
// inventing the zero time.
func TestEnvelopeWithoutCreatedAtHasNoSendTime(t *testing.T) {
	r, err := NewRow(t.Context(), reliar.NewMsg(rowTestMsg{}), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	env, err := r.Envelope()
	if err != nil {
		t.Fatal(err)
	}
	if env.Metadata.Delivery.SentAt != nil {
		t.Fatalf("send time = %v, want none", env.Metadata.Delivery.SentAt)
	}
}
