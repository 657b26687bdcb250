package redispub_test

import (
	"errors"
	"testing"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/publisher/publishertest"
	"github.com/reliar/reliar/publisher/redispub"
)

func TestMessageID(t *testing.T) {
	id := reliar.NewMessageID()
	for _, tt := range []struct {
		name    string
		values  map[string]any
		want    reliar.MessageID
		wantErr error
	}{
		{"string", map[string]any{"ce-id": id.String(), "payload": "x"}, id, nil},
		{"bytes", map[string]any{"ce-id": []byte(id.String())}, id, nil},
		{"upper case", map[string]any{"CE-ID": id.String()}, id, nil},
		{"no payload needed", map[string]any{"ce-id": id.String()}, id, nil},
		{"none", map[string]any{"payload": "x"}, reliar.MessageID{}, redispub.ErrNoMessageID},
		{"nil values", nil, reliar.MessageID{}, redispub.ErrNoMessageID},
		{"empty", map[string]any{"ce-id": ""}, reliar.MessageID{}, redispub.ErrNoMessageID},
		{"not a UUID", map[string]any{"ce-id": "order-1"}, reliar.MessageID{}, redispub.ErrInvalidMessageID},
		{"not text", map[string]any{"ce-id": 42}, reliar.MessageID{}, redispub.ErrInvalidMessageID},
		{"nil UUID", map[string]any{"ce-id": "00000000-0000-0000-0000-000000000000"}, reliar.MessageID{}, redispub.ErrInvalidMessageID},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := redispub.MessageID(tt.values)
			if !errors.Is(err, tt.wantErr) || got != tt.want {
				t.Fatalf("MessageID = %v, %v; want %v, %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

// TestMessageIDOfRepublishedEntry adds one message twice, as a retried
// publish does: two entries, two entry ids, one message id.
func TestMessageIDOfRepublishedEntry(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	stream := uniqueKey(t, c, "consume")
	p := newPublisher(t, c, redispub.WithStream(stream))
	env := publishertest.Envelope(1)
	for range 2 {
		if err := p.Publish(t.Context(), env); err != nil {
			t.Fatalf("Publish: %v", err)
		}
	}
	entries, err := c.XRange(t.Context(), stream, "-", "+").Result()
	if err != nil {
		t.Fatalf("XRANGE: %v", err)
	}
	if len(entries) != 2 || entries[0].ID == entries[1].ID {
		t.Fatalf("got %d entries, want 2 with distinct entry ids", len(entries))
	}
	for _, e := range entries {
		id, err := redispub.MessageID(e.Values)
		if err != nil || id != env.ID {
			t.Errorf("entry %s: MessageID = %v, %v; want %v", e.ID, id, err, env.ID)
		}
		got, err := redispub.Envelope(e.Values)
		if err != nil {
			t.Fatalf("Decode: %v", err)
		}
		if err := publishertest.Compare(env, got); err != nil {
			t.Error(err)
		}
	}
}
