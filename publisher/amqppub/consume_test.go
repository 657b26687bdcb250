package amqppub_test

import (
	"errors"
	"maps"
	"testing"

	amqp091 "github.com/rabbitmq/amqp091-go"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/publisher/amqppub"
	"github.com/reliar/reliar/publisher/publishertest"
)

// idCase is a delivery and what MessageID and Envelope make of it.
type idCase struct {
	name    string
	msg     amqp091.Publishing
	want    reliar.MessageID
	wantErr error             // of both MessageID and Envelope
	envErr  bool              // Envelope fails although MessageID succeeds
	headers map[string]string // the envelope's user headers, when set
}

// idCases are deliveries other producers may send: with only one of the
// id fields, a malformed id, no id, or an attribute that does not parse.
func idCases(id, other reliar.MessageID) []idCase {
	return []idCase{
		{"property only", amqp091.Publishing{MessageId: id.String()}, id, nil, false, nil},
		{"cloudEvents:id header only", amqp091.Publishing{Headers: amqp091.Table{"cloudEvents:id": id.String()}}, id, nil, false, nil},
		{"cloudEvents:id wins over the pre-release ce-id", amqp091.Publishing{Headers: amqp091.Table{"cloudEvents:id": id.String(), "ce-id": other.String()}}, id, nil, false, nil},
		{"pre-release ce-id header only", amqp091.Publishing{Headers: amqp091.Table{"ce-id": id.String()}}, id, nil, false, nil},
		{"header in bytes", amqp091.Publishing{Headers: amqp091.Table{"ce-id": []byte(id.String())}}, id, nil, false, nil},
		{"header upper case", amqp091.Publishing{Headers: amqp091.Table{"CE-ID": id.String()}}, id, nil, false, nil},
		{"property wins", amqp091.Publishing{MessageId: id.String(), Headers: amqp091.Table{"ce-id": other.String()}}, id, nil, false, nil},
		{"other header types", amqp091.Publishing{MessageId: id.String(), Headers: amqp091.Table{"x-count": int32(7), "x-void": nil}}, id, nil, false, map[string]string{"x-count": "7"}},
		{"none", amqp091.Publishing{Headers: amqp091.Table{"x": "y"}}, reliar.MessageID{}, amqppub.ErrNoMessageID, false, nil},
		{"empty header", amqp091.Publishing{Headers: amqp091.Table{"ce-id": ""}}, reliar.MessageID{}, amqppub.ErrNoMessageID, false, nil},
		{"property not a UUID", amqp091.Publishing{MessageId: "order-1", Headers: amqp091.Table{"ce-id": id.String()}}, reliar.MessageID{}, amqppub.ErrInvalidMessageID, false, nil},
		{"header not a UUID", amqp091.Publishing{Headers: amqp091.Table{"ce-id": "nope"}}, reliar.MessageID{}, amqppub.ErrInvalidMessageID, false, nil},
		{"header not text", amqp091.Publishing{Headers: amqp091.Table{"ce-id": int64(42)}}, reliar.MessageID{}, amqppub.ErrInvalidMessageID, false, nil},
		{"nil UUID", amqp091.Publishing{MessageId: "00000000-0000-0000-0000-000000000000"}, reliar.MessageID{}, amqppub.ErrInvalidMessageID, false, nil},
		{"bad ce-time", amqp091.Publishing{MessageId: id.String(), Headers: amqp091.Table{"ce-time": "yesterday"}}, id, nil, true, nil},
	}
}

// deliveredAs returns the delivery a consumer gets for msg, without a
// broker.
func deliveredAs(msg amqp091.Publishing) amqp091.Delivery {
	return amqp091.Delivery{MessageId: msg.MessageId, Headers: msg.Headers, Body: msg.Body}
}

// checkDelivery checks MessageID and Envelope of d against tt.
func checkDelivery(t *testing.T, d amqp091.Delivery, tt idCase) {
	t.Helper()
	want, wantErr, envErr := tt.want, tt.wantErr, tt.envErr
	got, err := amqppub.MessageID(d)
	if !errors.Is(err, wantErr) || got != want {
		t.Fatalf("MessageID = %v, %v; want %v, %v", got, err, want, wantErr)
	}
	env, err := amqppub.Envelope(d)
	switch {
	case wantErr != nil && !errors.Is(err, wantErr):
		t.Fatalf("Envelope error = %v, want %v", err, wantErr)
	case envErr && err == nil:
		t.Fatal("Envelope accepted a bad attribute")
	case wantErr == nil && !envErr && (err != nil || env.ID != want || string(env.Payload) != string(d.Body)):
		t.Fatalf("Envelope = %v, %v; want id %v and the body", env, err, want)
	case tt.headers != nil && !maps.Equal(env.Headers, tt.headers):
		t.Fatalf("Envelope headers = %v, want %v", env.Headers, tt.headers)
	}
}

func TestMessageIDAndEnvelope(t *testing.T) {
	id, other := reliar.NewMessageID(), reliar.NewMessageID()
	for _, tt := range idCases(id, other) {
		t.Run(tt.name, func(t *testing.T) {
			checkDelivery(t, deliveredAs(tt.msg), tt)
		})
	}
}

// TestConsumeForeignMessages sends the same cases through RabbitMQ, whose
// table encoding may change value types.
func TestConsumeForeignMessages(t *testing.T) {
	t.Parallel()
	top := newTopology(t, everything)
	id, other := reliar.NewMessageID(), reliar.NewMessageID()
	for _, tt := range idCases(id, other) {
		t.Run(tt.name, func(t *testing.T) {
			tt.msg.Body = []byte("body")
			if err := top.admin.PublishWithContext(timeout(t), top.exchange, "foreign", false, false, tt.msg); err != nil {
				t.Fatalf("publish: %v", err)
			}
			checkDelivery(t, top.receive(t, 1)[0], tt)
		})
	}
}

// TestConsumeRoundTrip reads what the publisher sent back from the
// deliveries of a queue.
func TestConsumeRoundTrip(t *testing.T) {
	t.Parallel()
	top := newTopology(t, everything)
	p := newPublisher(t, brokerURL, amqppub.WithExchange(top.exchange))
	sent := []*reliar.SerializedEnvelope{publishertest.Envelope(1), publishertest.Unkeyed(2)}
	for _, env := range sent {
		if err := p.Publish(timeout(t), env); err != nil {
			t.Fatalf("Publish: %v", err)
		}
	}
	for i, d := range top.receive(t, len(sent)) {
		if id, err := amqppub.MessageID(d); err != nil || id != sent[i].ID {
			t.Errorf("MessageID = %v, %v; want %v", id, err, sent[i].ID)
		}
		got, err := amqppub.Envelope(d)
		if err != nil {
			t.Fatalf("Envelope: %v", err)
		}
		if err := publishertest.Compare(sent[i], got); err != nil {
			t.Error(err)
		}
	}
}
