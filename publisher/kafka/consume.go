package kafka

import (
	"errors"
	"fmt"
	"strings"

	"github.com/reliar/reliar"
	"github.com/twmb/franz-go/pkg/kgo"
)

var (
	// ErrNoMessageID is returned by [MessageID] and [Envelope] for a
	// record without a ce-id header.
	ErrNoMessageID = errors.New("kafka: record has no message id (ce-id header)")
	// ErrInvalidMessageID is wrapped by the error of [MessageID] and
	// [Envelope] for a ce-id that is not a UUID, or is the nil UUID.
	ErrInvalidMessageID = errors.New("kafka: invalid message id")
)

// MessageID reads the message id of a consumed record, the key a consumer
// deduplicates by (see package inbox), from its ce-id header. Kafka has no
// message id of its own: a record published again gets a new offset, but
// the same ce-id. Header names match case-insensitively; of repeated
// headers the last counts, as in Kafka's own clients.
func MessageID(r *kgo.Record) (reliar.MessageID, error) {
	return messageID(recordHeaders(r))
}

// Envelope rebuilds the envelope of a consumed record, for consumers
// written in Go: reliar.EnvelopeFromHeaders over the record headers, with
// the record value as the payload. Its ID is what [MessageID] returns. It
// fails like MessageID, and when an attribute header does not parse.
func Envelope(r *kgo.Record) (*reliar.SerializedEnvelope, error) {
	h := recordHeaders(r)
	if _, err := messageID(h); err != nil {
		return nil, err
	}
	env, err := reliar.EnvelopeFromHeaders(h, r.Value)
	if err != nil {
		return nil, fmt.Errorf("kafka: decode record at %s/%d@%d: %w", r.Topic, r.Partition, r.Offset, err)
	}
	return env, nil
}

// recordHeaders returns r's headers by lower-case name, the last of
// repeated names winning.
func recordHeaders(r *kgo.Record) map[string]string {
	if r == nil {
		return nil
	}
	h := make(map[string]string, len(r.Headers))
	for _, x := range r.Headers {
		h[strings.ToLower(x.Key)] = string(x.Value)
	}
	return h
}

// messageID parses the ce-id of headers keyed by lower-case name.
func messageID(h map[string]string) (reliar.MessageID, error) {
	v := h[reliar.HeaderID]
	if v == "" {
		return reliar.MessageID{}, ErrNoMessageID
	}
	id, err := reliar.ParseMessageID(v)
	if err != nil {
		return reliar.MessageID{}, fmt.Errorf("%w: %w", ErrInvalidMessageID, err)
	}
	if id == (reliar.MessageID{}) {
		return reliar.MessageID{}, fmt.Errorf("%w: the nil UUID", ErrInvalidMessageID)
	}
	return id, nil
}
