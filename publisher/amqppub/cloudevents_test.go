package amqppub_test

import (
	"context"
	"errors"
	"fmt"

	goamqp "github.com/Azure/go-amqp"
	ceamqp "github.com/cloudevents/sdk-go/protocol/amqp/v2"
	cebinding "github.com/cloudevents/sdk-go/v2/binding"
	amqp091 "github.com/rabbitmq/amqp091-go"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/observability/otelobs"
	"github.com/reliar/reliar/publisher/internal/cetest"
	"github.com/reliar/reliar/publisher/publishertest"
)

// sdkReference reads a delivery with the CloudEvents SDK's AMQP binding.
// That binding is for AMQP 1.0, whose application properties RabbitMQ maps
// to and from the 0-9-1 header table: the test builds the 1.0 message the
// binding reads from the delivery's header table and content-type
// property, as they arrived.
func sdkReference(r publishertest.Received, sent *reliar.SerializedEnvelope) error {
	d, ok := r.Message.(amqp091.Delivery)
	if !ok {
		return fmt.Errorf("received a %T, not an amqp091.Delivery", r.Message)
	}
	m := &goamqp.Message{
		ApplicationProperties: map[string]any(d.Headers),
		Data:                  [][]byte{d.Body},
	}
	if d.ContentType != "" {
		ct := d.ContentType
		m.Properties = &goamqp.MessageProperties{ContentType: &ct}
	}
	ev, err := cebinding.ToEvent(context.Background(), ceamqp.NewMessage(m, nil))
	if err != nil {
		return fmt.Errorf("the SDK's AMQP binding: %w", err)
	}
	return errors.Join(cetest.Check(ev, sent, cetest.Options{}),
		cetest.CheckTrace(otelobs.TableCarrier(d.Headers), sent))
}
