package kafkapub_test

import (
	"errors"
	"testing"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/publisher/kafkapub"
	"github.com/reliar/reliar/publisher/publishertest"
	"github.com/twmb/franz-go/pkg/kgo"
)

// headers builds record headers from name, value pairs.
func headers(kv ...string) []kgo.RecordHeader {
	var h []kgo.RecordHeader
	for i := 0; i < len(kv); i += 2 {
		h = append(h, kgo.RecordHeader{Key: kv[i], Value: []byte(kv[i+1])})
	}
	return h
}

func TestMessageIDAndEnvelope(t *testing.T) {
	id, other := reliar.NewMessageID(), reliar.NewMessageID()
	for _, tt := range []struct {
		name    string
		record  *kgo.Record
		want    reliar.MessageID
		wantErr error // of both MessageID and Envelope
		envErr  bool  // Envelope fails although MessageID succeeds
	}{
		{"ce_id, the Kafka binding's name", &kgo.Record{Headers: headers("ce_id", id.String())}, id, nil, false},
		{"ce_id wins over the pre-release ce-id", &kgo.Record{Headers: headers("ce-id", other.String(), "ce_id", id.String())}, id, nil, false},
		{"ce-id, the pre-release name", &kgo.Record{Headers: headers("ce-id", id.String())}, id, nil, false},
		{"upper case", &kgo.Record{Headers: headers("CE-ID", id.String())}, id, nil, false},
		{"repeated: the last counts", &kgo.Record{Headers: headers("ce-id", other.String(), "ce-id", id.String())}, id, nil, false},
		{"no headers", &kgo.Record{}, reliar.MessageID{}, kafkapub.ErrNoMessageID, false},
		{"nil record", nil, reliar.MessageID{}, kafkapub.ErrNoMessageID, false},
		{"empty ce-id", &kgo.Record{Headers: headers("ce-id", "")}, reliar.MessageID{}, kafkapub.ErrNoMessageID, false},
		{"other id headers only", &kgo.Record{Headers: headers("message-id", id.String())}, reliar.MessageID{}, kafkapub.ErrNoMessageID, false},
		{"not a UUID", &kgo.Record{Headers: headers("ce-id", "order-1")}, reliar.MessageID{}, kafkapub.ErrInvalidMessageID, false},
		{"nil UUID", &kgo.Record{Headers: headers("ce-id", "00000000-0000-0000-0000-000000000000")}, reliar.MessageID{}, kafkapub.ErrInvalidMessageID, false},
		{"bad ce-time", &kgo.Record{Headers: headers("ce-id", id.String(), "ce-time", "yesterday")}, id, nil, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := kafkapub.MessageID(tt.record)
			if !errors.Is(err, tt.wantErr) || got != tt.want {
				t.Fatalf("MessageID = %v, %v; want %v, %v", got, err, tt.want, tt.wantErr)
			}
			env, err := kafkapub.Envelope(tt.record)
			switch {
			case tt.wantErr != nil && !errors.Is(err, tt.wantErr):
				t.Fatalf("Envelope error = %v, want %v", err, tt.wantErr)
			case tt.envErr && err == nil:
				t.Fatal("Envelope accepted a bad attribute")
			case tt.wantErr == nil && !tt.envErr && (err != nil || env.ID != tt.want):
				t.Fatalf("Envelope = %v, %v; want id %v", env, err, tt.want)
			}
		})
	}
}

// TestConsumeRoundTrip reads what the publisher produced back from the
// records a consumer receives.
func TestConsumeRoundTrip(t *testing.T) {
	t.Parallel()
	topic := uniqueTopic(t)
	c := newCluster(t, topic)
	p := newPublisher(t, c, nil, kafkapub.WithDefaultTopic(topic))
	sent := map[reliar.MessageID]*reliar.SerializedEnvelope{}
	for _, env := range []*reliar.SerializedEnvelope{publishertest.Envelope(1), publishertest.Unkeyed(2)} {
		sent[env.ID] = env
		if err := p.Publish(t.Context(), env); err != nil {
			t.Fatalf("Publish: %v", err)
		}
	}
	for _, r := range consume(t, c, topic, len(sent)) {
		id, err := kafkapub.MessageID(r)
		if err != nil {
			t.Fatalf("MessageID: %v", err)
		}
		want, ok := sent[id]
		if !ok {
			t.Fatalf("MessageID = %v, not a message sent", id)
		}
		got, err := kafkapub.Envelope(r)
		if err != nil {
			t.Fatalf("Envelope: %v", err)
		}
		if err := publishertest.Compare(want, got); err != nil {
			t.Error(err)
		}
		delete(sent, id)
	}
}
