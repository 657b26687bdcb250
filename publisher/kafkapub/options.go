package kafkapub

import (
	"errors"
	"fmt"
	"maps"

	"github.com/reliar/reliar"
)

// ErrInvalidOption is wrapped by every error that [New] returns for a bad
// option.
var ErrInvalidOption = errors.New("kafkapub: invalid option")

// Option configures a [Publisher]. Options validate their arguments and
// return an error wrapping [ErrInvalidOption].
type Option func(*options) error

type options struct {
	topicFunc    func(*reliar.SerializedEnvelope) string
	topics       map[string]string
	defaultTopic string
}

// WithTopicFunc chooses each record's topic with f. It cannot be combined
// with [WithTopics] or [WithDefaultTopic]. An envelope for which f returns
// an empty or invalid topic name fails permanently: that message alone
// makes the name invalid.
func WithTopicFunc(f func(*reliar.SerializedEnvelope) string) Option {
	return func(o *options) error {
		if f == nil {
			return fmt.Errorf("%w: WithTopicFunc: nil func", ErrInvalidOption)
		}
		o.topicFunc = f
		return nil
	}
}

// WithTopics maps message types to topics. A message type missing from m
// goes to the [WithDefaultTopic] topic; without one it fails transiently
// with [ErrNoTopic], like any misconfiguration, until the mapping covers
// it.
func WithTopics(m map[string]string) Option {
	return func(o *options) error {
		if len(m) == 0 {
			return fmt.Errorf("%w: WithTopics: empty map", ErrInvalidOption)
		}
		for typ, topic := range m {
			if typ == "" {
				return fmt.Errorf("%w: WithTopics: an empty message type", ErrInvalidOption)
			}
			if err := validTopic(topic); err != nil {
				return fmt.Errorf("%w: WithTopics[%q]: %w", ErrInvalidOption, typ, err)
			}
		}
		o.topics = maps.Clone(m)
		return nil
	}
}

// WithDefaultTopic is the topic of every message whose type [WithTopics]
// does not map (of every message, without WithTopics).
func WithDefaultTopic(topic string) Option {
	return func(o *options) error {
		if err := validTopic(topic); err != nil {
			return fmt.Errorf("%w: WithDefaultTopic: %w", ErrInvalidOption, err)
		}
		o.defaultTopic = topic
		return nil
	}
}

// newOptions applies opts and checks that they name a topic for every
// message, one way only.
func newOptions(opts []Option) (options, error) {
	var o options
	for _, opt := range opts {
		if opt == nil {
			return o, fmt.Errorf("%w: nil option", ErrInvalidOption)
		}
		if err := opt(&o); err != nil {
			return o, err
		}
	}
	switch {
	case o.topicFunc != nil && (o.topics != nil || o.defaultTopic != ""):
		return o, fmt.Errorf("%w: WithTopicFunc cannot be combined with WithTopics or WithDefaultTopic", ErrInvalidOption)
	case o.topicFunc == nil && o.topics == nil && o.defaultTopic == "":
		return o, fmt.Errorf("%w: no topic: give WithTopicFunc, WithTopics or WithDefaultTopic", ErrInvalidOption)
	}
	return o, nil
}

// topicFor returns the topic of env, or the error of a message without
// one.
func (o *options) topicFor(env *reliar.SerializedEnvelope) (string, error) {
	if o.topicFunc != nil {
		topic := o.topicFunc(env)
		if err := validTopic(topic); err != nil {
			return "", reliar.Permanent(fmt.Errorf("kafkapub: topic of message %s: %w", env.ID, err))
		}
		return topic, nil
	}
	if topic, ok := o.topics[env.MessageType]; ok {
		return topic, nil
	}
	if o.defaultTopic != "" {
		return o.defaultTopic, nil
	}
	return "", fmt.Errorf("%w: message %s of type %q", ErrNoTopic, env.ID, env.MessageType)
}
