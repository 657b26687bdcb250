package kafka

import (
	"errors"
	"fmt"
	"maps"

	"github.com/reliar/reliar"
)

// ErrInvalidOption is wrapped by every error that [New] returns for a bad
// option.
var ErrInvalidOption = errors.New("kafka: invalid option")

// Option configures a [Publisher].
type Option func(*config) error

type config struct {
	topicFunc    func(*reliar.SerializedEnvelope) string
	topics       map[string]string
	defaultTopic string
}

// TopicFunc chooses each record's topic with f. It cannot be combined with
// [Topics] or [DefaultTopic]. An envelope for which f returns an empty or
// invalid topic name fails permanently.
func TopicFunc(f func(*reliar.SerializedEnvelope) string) Option {
	return func(c *config) error {
		if f == nil {
			return fmt.Errorf("%w: TopicFunc is nil", ErrInvalidOption)
		}
		c.topicFunc = f
		return nil
	}
}

// Topics maps message types to topics. A message type missing from m goes to
// the [DefaultTopic], and fails permanently when there is none.
func Topics(m map[string]string) Option {
	return func(c *config) error {
		if len(m) == 0 {
			return fmt.Errorf("%w: Topics is empty", ErrInvalidOption)
		}
		for typ, topic := range m {
			if typ == "" {
				return fmt.Errorf("%w: Topics has an empty message type", ErrInvalidOption)
			}
			if err := validTopic(topic); err != nil {
				return fmt.Errorf("%w: Topics[%q]: %w", ErrInvalidOption, typ, err)
			}
		}
		c.topics = maps.Clone(m)
		return nil
	}
}

// DefaultTopic is the topic of every message whose type [Topics] does not
// map (of every message, without Topics).
func DefaultTopic(topic string) Option {
	return func(c *config) error {
		if err := validTopic(topic); err != nil {
			return fmt.Errorf("%w: DefaultTopic: %w", ErrInvalidOption, err)
		}
		c.defaultTopic = topic
		return nil
	}
}

// newConfig applies opts and checks that they name a topic for every
// message, one way only.
func newConfig(opts []Option) (config, error) {
	var c config
	for _, o := range opts {
		if o == nil {
			return c, fmt.Errorf("%w: nil option", ErrInvalidOption)
		}
		if err := o(&c); err != nil {
			return c, err
		}
	}
	switch {
	case c.topicFunc != nil && (c.topics != nil || c.defaultTopic != ""):
		return c, fmt.Errorf("%w: TopicFunc cannot be combined with Topics or DefaultTopic", ErrInvalidOption)
	case c.topicFunc == nil && c.topics == nil && c.defaultTopic == "":
		return c, fmt.Errorf("%w: no topic: give TopicFunc, Topics or DefaultTopic", ErrInvalidOption)
	}
	return c, nil
}

// topicFor returns the topic of env, or a permanent error.
func (c *config) topicFor(env *reliar.SerializedEnvelope) (string, error) {
	if c.topicFunc != nil {
		topic := c.topicFunc(env)
		if err := validTopic(topic); err != nil {
			return "", reliar.Permanent(fmt.Errorf("kafka: topic of message %s: %w", env.ID, err))
		}
		return topic, nil
	}
	if topic, ok := c.topics[env.MessageType]; ok {
		return topic, nil
	}
	if c.defaultTopic != "" {
		return c.defaultTopic, nil
	}
	return "", reliar.Permanent(fmt.Errorf("%w: message %s of type %q", ErrNoTopic, env.ID, env.MessageType))
}
