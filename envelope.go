package reliar

import "time"

// SerializedEnvelope is what a publisher receives: a stored message with its
// payload already serialized.
type SerializedEnvelope struct {
	ID             MessageID
	MessageType    string
	MessageVersion uint16
	ContentType    string
	Payload        []byte
	Metadata       Metadata
	Headers        map[string]string
	// OrderingKey is the row's ordering key; empty when unordered.
	OrderingKey string
	// Sequence is the row's position in the outbox table (insertion order).
	Sequence int64
	// Attempt is the 1-based number of this publish attempt: the outcomes
	// recorded so far plus one.
	Attempt int
	// CreatedAt is when the row was inserted, by the database clock.
	CreatedAt time.Time
}

// PartitionKey is the key a broker partitions or routes by: the ordering key,
// else the conversation id, else the message id.
func (e *SerializedEnvelope) PartitionKey() string {
	if e.OrderingKey != "" {
		return e.OrderingKey
	}
	if c := e.Metadata.Correlation.ConversationID; c != [16]byte{} {
		return c.String()
	}
	return e.ID.String()
}
