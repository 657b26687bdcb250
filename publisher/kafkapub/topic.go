package kafkapub

import (
	"errors"
	"fmt"
)

// ErrNoTopic is wrapped by the error of a message whose type no topic
// mapping covers. It is transient: a misconfiguration every message of the
// type shares, which the operator fixes by mapping it.
var ErrNoTopic = errors.New("kafkapub: no topic for message type")

// ErrInvalidTopic is wrapped by the error of a topic name Kafka would refuse.
var ErrInvalidTopic = errors.New("kafkapub: invalid topic name")

// maxTopicLen is Kafka's limit on topic names.
const maxTopicLen = 249

// validTopic checks a topic name the way Kafka does: 1 to 249 characters
// from [a-zA-Z0-9._-], and neither "." nor "..".
func validTopic(topic string) error {
	switch {
	case topic == "":
		return fmt.Errorf("%w: empty", ErrInvalidTopic)
	case len(topic) > maxTopicLen:
		return fmt.Errorf("%w: %d characters, over %d", ErrInvalidTopic, len(topic), maxTopicLen)
	case topic == "." || topic == "..":
		return fmt.Errorf("%w: %q", ErrInvalidTopic, topic)
	}
	for _, r := range topic {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-'
		if !ok {
			return fmt.Errorf("%w: %q has the character %q", ErrInvalidTopic, topic, r)
		}
	}
	return nil
}
