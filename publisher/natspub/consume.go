package natspub

import (
	"errors"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/reliar/reliar"
)

var (
	// ErrNoMessageID is returned by [MessageID] and [Envelope] for a
	// message with neither Nats-Msg-Id nor ce-id.
	ErrNoMessageID = errors.New("natspub: message has no message id (Nats-Msg-Id or ce-id)")
	// ErrInvalidMessageID is wrapped by their error for a message id that
	// is not a UUID, or is the nil UUID.
	ErrInvalidMessageID = errors.New("natspub: invalid message id")
)

// MessageID reads the message id of a received message, the key a
// consumer deduplicates by (see package inbox): the Nats-Msg-Id header,
// else the ce-id header. The publisher sets both to the message id, and
// they stay the same on every redelivery and every republish. It takes the
// headers of any NATS message: a core *nats.Msg's Header, a jetstream.Msg's
// Headers(), a jetstream.RawStreamMsg's Header. Header names match
// case-insensitively.
func MessageID(h nats.Header) (reliar.MessageID, error) {
	for _, name := range []string{jetstream.MsgIDHeader, reliar.HeaderID} {
		if v := lookup(h, name); v != "" {
			return parseID(name, v)
		}
	}
	return reliar.MessageID{}, ErrNoMessageID
}

// Envelope rebuilds the envelope of a received message from its headers
// and data, for consumers written in Go: the ce- headers and content-type
// of the CloudEvents NATS binding are its attributes, the W3C trace headers
// its trace context, every other header but JetStream's own Nats- ones a
// user header (names in lower case), the data its payload, and its ID what
// [MessageID] reads. Like MessageID it takes the headers of a core or a
// JetStream message. It fails like MessageID, and when an attribute does
// not parse.
func Envelope(h nats.Header, data []byte) (*reliar.SerializedEnvelope, error) {
	id, err := MessageID(h)
	if err != nil {
		return nil, err
	}
	flat := make(map[string]string, len(h)+1)
	for k, v := range h {
		if len(v) > 0 && !strings.HasPrefix(strings.ToLower(k), reservedPrefix) && !strings.EqualFold(k, reliar.HeaderID) {
			flat[k] = v[0]
		}
	}
	flat[reliar.HeaderID] = id.String()
	env, err := reliar.EnvelopeFromHeaders(flat, data)
	if err != nil {
		return nil, fmt.Errorf("natspub: decode message %s: %w", id, err)
	}
	return env, nil
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
