package amqp

import (
	"errors"
	"fmt"
	"strings"

	amqp091 "github.com/rabbitmq/amqp091-go"
	"github.com/reliar/reliar"
)

var (
	// ErrNoMessageID is returned by [MessageID] and [Envelope] for a
	// delivery with neither a message-id property nor a ce-id header.
	ErrNoMessageID = errors.New("amqp: delivery has no message id (message-id property or ce-id header)")
	// ErrInvalidMessageID is wrapped by the error of [MessageID] and
	// [Envelope] for a message id that is not a UUID, or is the nil UUID.
	ErrInvalidMessageID = errors.New("amqp: invalid message id")
)

// MessageID reads the message id of a delivery, the key a consumer
// deduplicates by (see package inbox): its message-id property, else its
// ce-id header (matched case-insensitively). The publisher sets both to
// the message id, and they stay the same on every redelivery and every
// republish.
func MessageID(d amqp091.Delivery) (reliar.MessageID, error) {
	if d.MessageId != "" {
		return parseID("message-id property", d.MessageId)
	}
	v, ok := d.Headers[reliar.HeaderID]
	if !ok {
		for k, kv := range d.Headers {
			if strings.EqualFold(k, reliar.HeaderID) {
				v = kv
				break
			}
		}
	}
	switch v := v.(type) {
	case nil:
	case string:
		if v != "" {
			return parseID(reliar.HeaderID+" header", v)
		}
	case []byte:
		if len(v) > 0 {
			return parseID(reliar.HeaderID+" header", string(v))
		}
	default:
		return reliar.MessageID{}, fmt.Errorf("%w: the %s header is a %T", ErrInvalidMessageID, reliar.HeaderID, v)
	}
	return reliar.MessageID{}, ErrNoMessageID
}

// Envelope rebuilds the envelope of a delivery, for consumers written in
// Go: reliar.EnvelopeFromHeaders over the header table, with the body as
// the payload and the id [MessageID] reads. Header values that are not
// text come back in their fmt.Sprint form; void ones are left out. It fails like MessageID, and
// when an attribute header does not parse.
func Envelope(d amqp091.Delivery) (*reliar.SerializedEnvelope, error) {
	id, err := MessageID(d)
	if err != nil {
		return nil, err
	}
	h := make(map[string]string, len(d.Headers)+1)
	for k, v := range d.Headers {
		switch v := v.(type) {
		case string:
			h[k] = v
		case []byte:
			h[k] = string(v)
		case nil:
		default:
			h[k] = fmt.Sprint(v)
		}
	}
	for k := range h {
		if strings.EqualFold(k, reliar.HeaderID) {
			delete(h, k)
		}
	}
	h[reliar.HeaderID] = id.String()
	env, err := reliar.EnvelopeFromHeaders(h, d.Body)
	if err != nil {
		return nil, fmt.Errorf("amqp: decode delivery %s: %w", id, err)
	}
	return env, nil
}

// parseID parses the message id found in where.
func parseID(where, v string) (reliar.MessageID, error) {
	id, err := reliar.ParseMessageID(v)
	if err != nil {
		return reliar.MessageID{}, fmt.Errorf("%w in the %s: %w", ErrInvalidMessageID, where, err)
	}
	if id == (reliar.MessageID{}) {
		return reliar.MessageID{}, fmt.Errorf("%w in the %s: the nil UUID", ErrInvalidMessageID, where)
	}
	return id, nil
}
