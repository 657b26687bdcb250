package amqppub

import (
	"errors"
	"fmt"
	"strings"

	amqp091 "github.com/rabbitmq/amqp091-go"
	"github.com/reliar/reliar"
)

var (
	// ErrNoMessageID is returned by [MessageID] and [Envelope] for a
	// delivery with neither a message-id property nor a cloudEvents:id
	// (or pre-release ce-id) header.
	ErrNoMessageID = errors.New("amqppub: delivery has no message id (message-id property or cloudEvents:id header)")
	// ErrInvalidMessageID is wrapped by the error of [MessageID] and
	// [Envelope] for a message id that is not a UUID, or is the nil UUID.
	ErrInvalidMessageID = errors.New("amqppub: invalid message id")
)

// legacyPrefix is the attribute prefix of messages published before the
// AMQP binding's names were used: "ce-", as on HTTP.
const legacyPrefix = "ce-"

// MessageID reads the message id of a delivery, the key a consumer
// deduplicates by (see package inbox): its message-id property, else its
// cloudEvents:id header, else the ce-id header of pre-release versions
// (header prefixes matched case-insensitively). The publisher sets the
// property and the header to the message id, and they stay the same on
// every redelivery and every republish.
func MessageID(d amqp091.Delivery) (reliar.MessageID, error) {
	if d.MessageId != "" {
		return parseID("message-id property", d.MessageId)
	}
	attrs, _, err := split(d)
	if err != nil {
		return reliar.MessageID{}, err
	}
	if v := attrs[reliar.AttrID]; v != "" {
		return parseID("cloudEvents:id header", v)
	}
	return reliar.MessageID{}, ErrNoMessageID
}

// Envelope rebuilds the envelope of a delivery, for consumers written in
// Go: the cloudEvents: headers are its attributes (the ce- headers of
// pre-release versions too), the content-type property its data content
// type, every other header a user header (in lower case; values that are
// not text in their fmt.Sprint form, void ones left out), the body its
// payload, and its ID what [MessageID] reads. It fails like MessageID, and
// when an attribute does not parse.
func Envelope(d amqp091.Delivery) (*reliar.SerializedEnvelope, error) {
	id, err := MessageID(d)
	if err != nil {
		return nil, err
	}
	attrs, user, err := split(d)
	if err != nil {
		return nil, err
	}
	attrs[reliar.AttrID] = id.String()
	if d.ContentType != "" {
		attrs[reliar.AttrDataContentType] = d.ContentType
	}
	env, err := reliar.EnvelopeFromAttributes(attrs, user, d.Body)
	if err != nil {
		return nil, fmt.Errorf("amqppub: decode delivery %s: %w", id, err)
	}
	return env, nil
}

// split returns the delivery's attributes by bare name and its other
// headers, by lower-case name. An attribute under the binding's
// cloudEvents: name wins over its pre-release ce- name.
func split(d amqp091.Delivery) (attrs, user map[string]string, err error) {
	attrs = make(map[string]string, 24)
	user = make(map[string]string, len(d.Headers))
	legacy := map[string]string{}
	for k, v := range d.Headers {
		var s string
		switch v := v.(type) {
		case nil:
			continue
		case string:
			s = v
		case []byte:
			s = string(v)
		default:
			s = fmt.Sprint(v)
		}
		name := strings.ToLower(k)
		switch {
		case strings.HasPrefix(name, strings.ToLower(PropertyPrefix)):
			attrs[name[len(PropertyPrefix):]] = s
		case strings.HasPrefix(name, legacyPrefix):
			legacy[name[len(legacyPrefix):]] = s
		case name == reliar.HeaderContentType && d.ContentType == "":
			legacy[reliar.AttrDataContentType] = s
		default:
			user[name] = s
		}
	}
	for k, v := range legacy {
		if _, ok := attrs[k]; !ok {
			attrs[k] = v
		}
	}
	if v, ok := d.Headers[PropertyPrefix+reliar.AttrID]; ok {
		if _, text := v.(string); !text {
			if _, raw := v.([]byte); !raw {
				return nil, nil, fmt.Errorf("%w: the cloudEvents:id header is a %T", ErrInvalidMessageID, v)
			}
		}
	}
	return attrs, user, nil
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
