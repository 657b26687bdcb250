package kafkapub

import (
	"errors"
	"fmt"
	"strings"

	"github.com/reliar/reliar"
	"github.com/twmb/franz-go/pkg/kgo"
)

var (
	// ErrNoMessageID is returned by [MessageID] and [Envelope] for a
	// record without a ce_id header.
	ErrNoMessageID = errors.New("kafkapub: record has no message id (ce_id header)")
	// ErrInvalidMessageID is wrapped by the error of [MessageID] and
	// [Envelope] for a ce_id that is not a UUID, or is the nil UUID.
	ErrInvalidMessageID = errors.New("kafkapub: invalid message id")
)

// legacyPrefix is the attribute prefix of records published before the
// Kafka binding's names were used: "ce-", as on HTTP.
const legacyPrefix = "ce-"

// MessageID reads the message id of a consumed record, the key a consumer
// deduplicates by (see package inbox), from its ce_id header (or the ce-id
// of records published by pre-release versions). Kafka has no message id
// of its own: a record published again gets a new offset, but the same
// ce_id. Header names match case-insensitively; of repeated headers the
// last counts, as in Kafka's own clients.
func MessageID(r *kgo.Record) (reliar.MessageID, error) {
	attrs, _ := split(r)
	return messageID(attrs)
}

// Envelope rebuilds the envelope of a consumed record, for consumers
// written in Go: the ce_ headers and content-type are the attributes (ce-
// ones too, from pre-release versions), every other header a user header
// (in lower case), the record value the payload. Its ID is what
// [MessageID] returns. It fails like MessageID, and when an attribute does
// not parse.
func Envelope(r *kgo.Record) (*reliar.SerializedEnvelope, error) {
	attrs, user := split(r)
	if _, err := messageID(attrs); err != nil {
		return nil, err
	}
	env, err := reliar.EnvelopeFromAttributes(attrs, user, r.Value)
	if err != nil {
		return nil, fmt.Errorf("kafkapub: decode record at %s/%d@%d: %w", r.Topic, r.Partition, r.Offset, err)
	}
	return env, nil
}

// split returns r's CloudEvents attributes by bare name and its other
// headers, all by lower-case name, the last of repeated names winning. An
// attribute under the binding's ce_ name wins over its pre-release ce-
// name.
func split(r *kgo.Record) (attrs, user map[string]string) {
	attrs = make(map[string]string, 24)
	if r == nil {
		return attrs, nil
	}
	user = make(map[string]string, len(r.Headers))
	legacy := map[string]string{}
	for _, x := range r.Headers {
		k := strings.ToLower(x.Key)
		switch {
		case k == HeaderContentType:
			attrs[reliar.AttrDataContentType] = string(x.Value)
		case strings.HasPrefix(k, HeaderPrefix):
			attrs[k[len(HeaderPrefix):]] = string(x.Value)
		case strings.HasPrefix(k, legacyPrefix):
			legacy[k[len(legacyPrefix):]] = string(x.Value)
		default:
			user[k] = string(x.Value)
		}
	}
	for k, v := range legacy {
		if _, ok := attrs[k]; !ok {
			attrs[k] = v
		}
	}
	return attrs, user
}

// messageID parses the id attribute.
func messageID(attrs map[string]string) (reliar.MessageID, error) {
	v := attrs[reliar.AttrID]
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
