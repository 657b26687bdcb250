package amqp

import (
	"fmt"
	"time"

	amqp091 "github.com/rabbitmq/amqp091-go"
	"github.com/reliar/reliar"
)

// maxShortString is the AMQP limit on names, routing keys and most
// message properties.
const maxShortString = 255

// message maps env to an AMQP publishing and its routing key: persistent,
// with the message id, type, content type, timestamp, correlation id and
// reply-to as properties, and the CloudEvents headers as the header table.
func (p *Publisher) message(env *reliar.SerializedEnvelope) (string, amqp091.Publishing, error) {
	key := p.cfg.routingKey(env)
	h := reliar.CloudEventHeaders(env)
	headers := make(amqp091.Table, len(h))
	for k, v := range h {
		if len(k) > maxShortString {
			return "", amqp091.Publishing{}, invalid(env, "a header name is over 255 bytes")
		}
		headers[k] = v
	}
	m := env.Metadata
	fields := []struct{ name, value string }{
		{"routing key", key},
		{"message type", env.MessageType},
		{"content type", env.ContentType},
		{"correlation id", m.Correlation.CorrelationID},
		{"reply-to", m.Routing.ReplyTo},
	}
	for _, f := range fields {
		if len(f.value) > maxShortString {
			return "", amqp091.Publishing{}, invalid(env, fmt.Sprintf("the %s is %d bytes, over 255", f.name, len(f.value)))
		}
	}
	ts := env.CreatedAt
	if m.Delivery.SentAt != nil {
		ts = *m.Delivery.SentAt
	}
	return key, amqp091.Publishing{
		Headers:       headers,
		ContentType:   env.ContentType,
		DeliveryMode:  amqp091.Persistent,
		CorrelationId: m.Correlation.CorrelationID,
		ReplyTo:       m.Routing.ReplyTo,
		MessageId:     env.ID.String(),
		Timestamp:     ts.Truncate(time.Second),
		Type:          env.MessageType,
		Body:          env.Payload,
	}, nil
}

func invalid(env *reliar.SerializedEnvelope, why string) error {
	return reliar.Permanent(fmt.Errorf("%w: message %s: %s", ErrInvalidMessage, env.ID, why))
}
