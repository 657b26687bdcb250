package amqppub_test

import (
	"errors"
	"testing"

	amqp091 "github.com/rabbitmq/amqp091-go"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/publisher/amqppub"
)

// TestPreconditionFailedFailsOnlyTheLargeMessage: a message over the
// broker's max_message_size makes RabbitMQ close the channel with 406
// PRECONDITION_FAILED. That message fails permanently; the others in
// flight on the channel are retried (transient) or were confirmed, never
// failed. Once the publisher knows the limit, it refuses a larger message
// before sending it.
func TestPreconditionFailedFailsOnlyTheLargeMessage(t *testing.T) {
	t.Parallel()
	top := newTopology(t, everything)
	p := newPublisher(t, brokerURL, amqppub.WithExchange(top.exchange), amqppub.WithPoolSize(1))

	envs := batch(11, "orders.placed")
	const huge = 5
	envs[huge].Payload = make([]byte, overMaxMessageSize)
	errs := p.PublishBatch(timeout(t), envs)
	delivered := map[string]bool{}
	for i, err := range errs {
		switch {
		case i == huge:
			if !errors.Is(err, amqppub.ErrTooLarge) || !reliar.IsPermanent(err) {
				t.Errorf("result of the large message = %v, want a permanent ErrTooLarge", err)
			}
		case err == nil:
			delivered[envs[i].ID.String()] = true
		case reliar.IsPermanent(err):
			t.Errorf("result %d = %v: a message that only shared the channel failed permanently", i, err)
		}
	}
	if len(delivered) > 0 {
		for _, d := range top.receive(t, len(delivered)) {
			delete(delivered, d.MessageId)
		}
		if len(delivered) > 0 {
			t.Errorf("confirmed but never delivered: %v", delivered)
		}
	}

	// The retry of the others goes through on a new channel.
	var retry []*reliar.SerializedEnvelope
	for i, err := range errs {
		if i != huge && err != nil {
			retry = append(retry, envs[i])
		}
	}
	for i, err := range p.PublishBatch(timeout(t), retry) {
		if err != nil {
			t.Errorf("retry %d: %v", i, err)
		}
	}
	top.receive(t, len(retry))

	err := p.Publish(timeout(t), envs[huge])
	if !errors.Is(err, amqppub.ErrTooLarge) || !reliar.IsPermanent(err) {
		t.Fatalf("second Publish of the large message = %v, want a permanent ErrTooLarge", err)
	}
	if ae := (*amqp091.Error)(nil); errors.As(err, &ae) {
		t.Errorf("the second refusal carries the broker's answer %v: the message was sent again", ae)
	}
}
