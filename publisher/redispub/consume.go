package redispub

import (
	"errors"
	"fmt"
	"strings"

	"github.com/reliar/reliar"
)

var (
	// ErrNoMessageID is returned by [MessageID] for a stream entry without
	// a ce-id field.
	ErrNoMessageID = errors.New("redispub: entry has no message id (ce-id field)")
	// ErrInvalidMessageID is wrapped by the error of [MessageID] for a
	// ce-id that is not a UUID, or is the nil UUID.
	ErrInvalidMessageID = errors.New("redispub: invalid message id")
)

// MessageID reads the message id of a stream entry (redis.XMessage.Values),
// the key a consumer deduplicates by (see package inbox), from its ce-id
// field, without decoding the rest of the entry as [Envelope] does. The
// entry id is no substitute: an entry added again gets a new entry id, but
// the same ce-id. The field name matches case-insensitively.
func MessageID(values map[string]any) (reliar.MessageID, error) {
	v, ok := values[reliar.HeaderID]
	if !ok {
		for k, kv := range values {
			if strings.EqualFold(k, reliar.HeaderID) {
				v, ok = kv, true
				break
			}
		}
	}
	if !ok {
		return reliar.MessageID{}, ErrNoMessageID
	}
	b, err := fieldBytes(reliar.HeaderID, v)
	if err != nil {
		return reliar.MessageID{}, fmt.Errorf("%w: %w", ErrInvalidMessageID, err)
	}
	if len(b) == 0 {
		return reliar.MessageID{}, ErrNoMessageID
	}
	id, err := reliar.ParseMessageID(string(b))
	if err != nil {
		return reliar.MessageID{}, fmt.Errorf("%w: %w", ErrInvalidMessageID, err)
	}
	if id == (reliar.MessageID{}) {
		return reliar.MessageID{}, fmt.Errorf("%w: the nil UUID", ErrInvalidMessageID)
	}
	return id, nil
}
