package nats

import (
	"errors"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/reliar/reliar"
)

var (
	// ErrNoMessageID is returned by [MessageID] and [Envelope], and their
	// nats.Header forms, for a message with neither Nats-Msg-Id nor ce-id.
	ErrNoMessageID = errors.New("nats: message has no message id (Nats-Msg-Id or ce-id)")
	// ErrInvalidMessageID is wrapped by their error for a message id that
	// is not a UUID, or is the nil UUID.
	ErrInvalidMessageID = errors.New("nats: invalid message id")
)

// MessageID reads the message id of a JetStream message, the key a
// consumer deduplicates by (see package inbox): the Nats-Msg-Id header,
// else the ce-id header. The publisher sets both to the message id, and
// they stay the same on every redelivery and every republish.
func MessageID(msg jetstream.Msg) (reliar.MessageID, error) {
	return HeaderMessageID(msg.Headers())
}

// HeaderMessageID is [MessageID] over the headers of any NATS message: a
// core *nats.Msg's Header, or a jetstream.RawStreamMsg's. Header names
// match case-insensitively.
func HeaderMessageID(h nats.Header) (reliar.MessageID, error) {
	for _, name := range []string{jetstream.MsgIDHeader, reliar.HeaderID} {
		if v := lookup(h, name); v != "" {
			return parseID(name, v)
		}
	}
	return reliar.MessageID{}, ErrNoMessageID
}

// Envelope rebuilds the envelope of a JetStream message, for consumers
// written in Go: [Decode] over its headers and data, with the id
// [MessageID] reads. It fails like MessageID, and when an attribute
// header does not parse.
func Envelope(msg jetstream.Msg) (*reliar.SerializedEnvelope, error) {
	return HeaderEnvelope(msg.Headers(), msg.Data())
}

// HeaderEnvelope is [Envelope] over the headers and data of any NATS
// message, such as a core *nats.Msg's Header and Data.
func HeaderEnvelope(h nats.Header, data []byte) (*reliar.SerializedEnvelope, error) {
	id, err := HeaderMessageID(h)
	if err != nil {
		return nil, err
	}
	withID := make(nats.Header, len(h)+1)
	for k, v := range h {
		if !strings.EqualFold(k, reliar.HeaderID) {
			withID[k] = v
		}
	}
	withID.Set(reliar.HeaderID, id.String())
	return Decode(withID, data)
}

// lookup returns the first value of header name, matched exactly first
// and then case-insensitively: NATS headers are case-sensitive, but
// producers other than this package may spell names differently. It does
// not use nats.Header.Get, which panics on a name with no values.
func lookup(h nats.Header, name string) string {
	if vs := h[name]; len(vs) > 0 && vs[0] != "" {
		return vs[0]
	}
	for k, vs := range h {
		if len(vs) > 0 && vs[0] != "" && strings.EqualFold(k, name) {
			return vs[0]
		}
	}
	return ""
}

// parseID parses the message id found in header name.
func parseID(name, v string) (reliar.MessageID, error) {
	id, err := reliar.ParseMessageID(v)
	if err != nil {
		return reliar.MessageID{}, fmt.Errorf("%w in %s: %w", ErrInvalidMessageID, name, err)
	}
	if id == (reliar.MessageID{}) {
		return reliar.MessageID{}, fmt.Errorf("%w in %s: the nil UUID", ErrInvalidMessageID, name)
	}
	return id, nil
}
