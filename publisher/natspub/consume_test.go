package natspub_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/publisher/natspub"
	"github.com/reliar/reliar/publisher/publishertest"
)

func TestHeaderMessageID(t *testing.T) {
	id, other := reliar.NewMessageID(), reliar.NewMessageID()
	for _, tt := range []struct {
		name    string
		header  nats.Header
		want    reliar.MessageID
		wantErr error
	}{
		{"both", nats.Header{"Nats-Msg-Id": {id.String()}, "ce-id": {id.String()}}, id, nil},
		{"Nats-Msg-Id only", nats.Header{"Nats-Msg-Id": {id.String()}}, id, nil},
		{"ce-id only", nats.Header{"ce-id": {id.String()}}, id, nil},
		{"other spellings", nats.Header{"NATS-MSG-ID": {id.String()}}, id, nil},
		{"ce-id upper case", nats.Header{"Ce-Id": {id.String()}}, id, nil},
		{"Nats-Msg-Id wins", nats.Header{"Nats-Msg-Id": {id.String()}, "ce-id": {other.String()}}, id, nil},
		{"empty Nats-Msg-Id falls back", nats.Header{"Nats-Msg-Id": {""}, "ce-id": {id.String()}}, id, nil},
		{"no values", nats.Header{"Nats-Msg-Id": {}}, reliar.MessageID{}, natspub.ErrNoMessageID},
		{"none", nats.Header{"x": {"y"}}, reliar.MessageID{}, natspub.ErrNoMessageID},
		{"nil header", nil, reliar.MessageID{}, natspub.ErrNoMessageID},
		{"Nats-Msg-Id not a UUID", nats.Header{"Nats-Msg-Id": {"order-1"}, "ce-id": {id.String()}}, reliar.MessageID{}, natspub.ErrInvalidMessageID},
		{"ce-id not a UUID", nats.Header{"ce-id": {"nope"}}, reliar.MessageID{}, natspub.ErrInvalidMessageID},
		{"nil UUID", nats.Header{"ce-id": {"00000000-0000-0000-0000-000000000000"}}, reliar.MessageID{}, natspub.ErrInvalidMessageID},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := natspub.MessageID(tt.header)
			if !errors.Is(err, tt.wantErr) || got != tt.want {
				t.Fatalf("HeaderMessageID = %v, %v; want %v, %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

// TestConsumeRoundTrip reads every message the publisher sent back through
// a JetStream consumer and a core subscription.
func TestConsumeRoundTrip(t *testing.T) {
	js := connect(t)
	stream, prefix := testStream(t, js)
	sub, err := js.Conn().SubscribeSync(prefix + ".>")
	if err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	if err := js.Conn().Flush(); err != nil {
		t.Fatalf("flush: %v", err)
	}
	p, err := natspub.New(js, natspub.WithSubjectPrefix(prefix))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	sent := []*reliar.SerializedEnvelope{publishertest.Envelope(1), publishertest.Unkeyed(2)}
	for _, env := range sent {
		if err := p.Publish(t.Context(), env); err != nil {
			t.Fatalf("Publish: %v", err)
		}
	}
	for i, msg := range fetch(t, stream, len(sent)) {
		want := sent[i]
		if id, err := natspub.MessageID(msg.Headers()); err != nil || id != want.ID {
			t.Errorf("MessageID = %v, %v; want %v", id, err, want.ID)
		}
		got, err := natspub.Envelope(msg.Headers(), msg.Data())
		if err != nil {
			t.Fatalf("Envelope: %v", err)
		}
		if err := publishertest.Compare(want, got); err != nil {
			t.Error(err)
		}
	}
	for _, want := range sent {
		m, err := sub.NextMsg(5 * time.Second)
		if err != nil {
			t.Fatalf("core subscription: %v", err)
		}
		if id, err := natspub.MessageID(m.Header); err != nil || id != want.ID {
			t.Errorf("HeaderMessageID = %v, %v; want %v", id, err, want.ID)
		}
		got, err := natspub.Envelope(m.Header, m.Data)
		if err != nil {
			t.Fatalf("HeaderEnvelope: %v", err)
		}
		if err := publishertest.Compare(want, got); err != nil {
			t.Error(err)
		}
	}
}

// TestConsumeForeignMessages reads messages other producers stored in the
// stream: with only one of the id headers, a malformed id, no id, or an
// attribute that does not parse.
func TestConsumeForeignMessages(t *testing.T) {
	js := connect(t)
	stream, prefix := testStream(t, js)
	id := reliar.NewMessageID()
	for _, tt := range []struct {
		name    string
		header  nats.Header
		wantID  error // of MessageID
		wantEnv bool  // whether Envelope succeeds
	}{
		{"Nats-Msg-Id only", nats.Header{"Nats-Msg-Id": {reliar.NewMessageID().String()}, "ce-type": {"t"}}, nil, true},
		{"ce-id only", nats.Header{"ce-id": {reliar.NewMessageID().String()}}, nil, true},
		{"Nats-Msg-Id not a UUID", nats.Header{"Nats-Msg-Id": {"order-1"}}, natspub.ErrInvalidMessageID, false},
		{"no id", nats.Header{"ce-type": {"t"}}, natspub.ErrNoMessageID, false},
		{"no headers", nil, natspub.ErrNoMessageID, false},
		{"bad ce-time", nats.Header{"ce-id": {id.String()}, "ce-time": {"yesterday"}}, nil, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			subject := prefix + ".foreign"
			if _, err := js.PublishMsg(t.Context(), &nats.Msg{Subject: subject, Header: tt.header, Data: []byte("data")}); err != nil {
				t.Fatalf("publish: %v", err)
			}
			m, err := stream.GetLastMsgForSubject(t.Context(), subject)
			if err != nil {
				t.Fatalf("read back: %v", err)
			}
			_, err = natspub.MessageID(m.Header)
			if !errors.Is(err, tt.wantID) {
				t.Errorf("HeaderMessageID error = %v, want %v", err, tt.wantID)
			}
			env, err := natspub.Envelope(m.Header, m.Data)
			if tt.wantEnv != (err == nil) {
				t.Fatalf("HeaderEnvelope error = %v, want success %v", err, tt.wantEnv)
			}
			if err == nil {
				want, _ := natspub.MessageID(m.Header)
				if env.ID != want || string(env.Payload) != "data" {
					t.Errorf("envelope %v with payload %q, want %v and the message data", env.ID, env.Payload, want)
				}
			}
		})
	}
}

// fetch returns the first n messages of stream through a consumer of its
// own, acknowledged.
func fetch(t *testing.T, stream jetstream.Stream, n int) []jetstream.Msg {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	cons, err := stream.CreateConsumer(ctx, jetstream.ConsumerConfig{AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		t.Fatalf("create consumer: %v", err)
	}
	var got []jetstream.Msg
	for len(got) < n && ctx.Err() == nil {
		batch, err := cons.Fetch(n-len(got), jetstream.FetchMaxWait(time.Second))
		if err != nil {
			t.Fatalf("fetch: %v", err)
		}
		for m := range batch.Messages() {
			if err := m.Ack(); err != nil {
				t.Fatalf("ack: %v", err)
			}
			got = append(got, m)
		}
		if err := batch.Error(); err != nil && !errors.Is(err, nats.ErrTimeout) {
			t.Fatalf("fetch: %v", err)
		}
	}
	if len(got) < n {
		t.Fatalf("fetched %d of %d messages", len(got), n)
	}
	return got
}
