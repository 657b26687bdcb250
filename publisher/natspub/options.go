package natspub

import (
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/reliar/reliar"
)

// DefaultSubjectPrefix is the first subject token of every message unless
// WithSubjectPrefix or WithSubjectFunc says otherwise.
const DefaultSubjectPrefix = "reliar"

// Option configures a Publisher. Options validate their arguments and
// return an error wrapping ErrInvalidOption.
type Option func(*options) error

type options struct {
	prefix      string
	prefixSet   bool
	subject     func(*reliar.SerializedEnvelope) string
	connOpts    []nats.Option
	dedupWindow time.Duration
}

// DefaultDedupWindow is JetStream's default stream Duplicates window.
const DefaultDedupWindow = 2 * time.Minute

// WithDedupWindow declares the Duplicates window of the streams this
// publisher writes to (see DedupWindowOf). Defaults to DefaultDedupWindow,
// JetStream's default. The dispatcher counts a republication whose previous
// claim is older than the window: JetStream will not drop that duplicate.
func WithDedupWindow(d time.Duration) Option {
	return func(o *options) error {
		if d < 0 {
			return fmt.Errorf("%w: negative dedup window %v", ErrInvalidOption, d)
		}
		o.dedupWindow = d
		return nil
	}
}

// WithSubjectPrefix sets the first subject token(s): the subject becomes
// "<prefix>.<message type>". Defaults to "reliar". It conflicts with
// WithSubjectFunc.
func WithSubjectPrefix(prefix string) Option {
	return func(o *options) error {
		if err := validSubject(prefix); err != nil {
			return fmt.Errorf("%w: subject prefix: %w", ErrInvalidOption, err)
		}
		o.prefix, o.prefixSet = prefix, true
		return nil
	}
}

// WithSubjectFunc chooses each message's subject. A subject that is not a
// valid publish subject fails that message permanently. It conflicts with
// WithSubjectPrefix.
func WithSubjectFunc(f func(env *reliar.SerializedEnvelope) string) Option {
	return func(o *options) error {
		if f == nil {
			return fmt.Errorf("%w: nil subject func", ErrInvalidOption)
		}
		o.subject = f
		return nil
	}
}

// WithConnOptions passes options to nats.Connect. Only Connect accepts it:
// New uses a connection the caller owns.
func WithConnOptions(opts ...nats.Option) Option {
	return func(o *options) error {
		o.connOpts = append(o.connOpts, opts...)
		return nil
	}
}

func buildOptions(opts []Option) (options, error) {
	o := options{prefix: DefaultSubjectPrefix, dedupWindow: DefaultDedupWindow}
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return o, err
		}
	}
	if o.prefixSet && o.subject != nil {
		return o, fmt.Errorf("%w: WithSubjectPrefix and WithSubjectFunc conflict", ErrInvalidOption)
	}
	if o.subject == nil {
		prefix := o.prefix
		o.subject = func(e *reliar.SerializedEnvelope) string { return prefix + "." + e.MessageType }
	}
	return o, nil
}
