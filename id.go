package reliar

import (
	"fmt"

	"github.com/google/uuid"
)

// MessageID identifies a message. New ids are UUIDv7: time-ordered, so they
// keep B-tree indexes compact.
type MessageID = uuid.UUID

// NewMessageID returns a fresh UUIDv7 message id.
func NewMessageID() MessageID {
	id, err := uuid.NewV7()
	if err != nil {
		// uuid.NewV7 fails only when the system's random source fails;
		// fall back to a random (v4) id, which is still unique.
		return uuid.New()
	}
	return id
}

// ParseMessageID parses the canonical text form of a message id.
func ParseMessageID(s string) (MessageID, error) {
	id, err := uuid.Parse(s)
	if err != nil {
		return uuid.Nil, fmt.Errorf("reliar: invalid message id %q: %w", s, err)
	}
	return id, nil
}
