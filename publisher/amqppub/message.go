package amqppub

import (
	"fmt"
	"time"

	amqp091 "github.com/rabbitmq/amqp091-go"
	"github.com/reliar/reliar"
)

// maxShortString is the AMQP limit on names, routing keys and most
// message properties.
const maxShortString = 255

// The AMQP binding's names: the application-property prefix of every
// attribute.
const PropertyPrefix = "cloudEvents:"

// message maps env to an AMQP publishing and its routing key: persistent,
// with the message id, type, content type, timestamp, correlation id and
// reply-to as properties, and the header table holding the CloudEvents
// attributes as the AMQP binding's "cloudEvents:" application properties,
// strings all, then the W3C trace headers and the user headers.
func (p *Publisher) message(env *reliar.SerializedEnvelope) (string, amqp091.Publishing, error) {
	key := p.opts.routingKey(env)
	headers := make(amqp091.Table, len(env.Headers)+24)
	for name, v := range reliar.CloudEventAttributes(env) {
		if name != reliar.AttrDataContentType {
			headers[PropertyPrefix+name] = v
		}
	}
	for k, v := range reliar.TraceHeaders(env) {
		headers[k] = v
	}
	for k, v := range reliar.UserHeaders(env) {
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
