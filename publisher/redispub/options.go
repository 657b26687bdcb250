package redispub

import (
	"fmt"

	"github.com/reliar/reliar"
)

// DefaultStream is the stream every message is added to unless WithStream
// or WithStreamFunc says otherwise.
const DefaultStream = "reliar"

// Option configures a Publisher. Options validate their arguments and
// return an error wrapping ErrInvalidOption.
type Option func(*options) error

type options struct {
	stream    string
	streamSet bool
	streamFn  func(*reliar.SerializedEnvelope) string
	maxLen    int64
}

// WithStream names the stream every message is added to. Defaults to
// "reliar". It conflicts with WithStreamFunc.
func WithStream(name string) Option {
	return func(o *options) error {
		if name == "" {
			return fmt.Errorf("%w: empty stream name", ErrInvalidOption)
		}
		o.stream, o.streamSet = name, true
		return nil
	}
}

// WithStreamFunc picks each message's stream (for example one stream per
// message type, or per partition key to shard ordered messages). An empty
// name fails that message permanently. It conflicts with WithStream.
func WithStreamFunc(f func(env *reliar.SerializedEnvelope) string) Option {
	return func(o *options) error {
		if f == nil {
			return fmt.Errorf("%w: nil stream func", ErrInvalidOption)
		}
		o.streamFn = f
		return nil
	}
}

// WithMaxLen caps every stream it adds to at about n entries ("MAXLEN ~
// n"): Redis trims whole internal nodes, so a stream can hold somewhat more.
// Trimming drops the oldest entries whether or not they were consumed.
// Defaults to no cap.
func WithMaxLen(n int64) Option {
	return func(o *options) error {
		if n <= 0 {
			return fmt.Errorf("%w: MaxLen %d is not positive", ErrInvalidOption, n)
		}
		o.maxLen = n
		return nil
	}
}

func buildOptions(opts []Option) (options, error) {
	o := options{stream: DefaultStream}
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return o, err
		}
	}
	if o.streamSet && o.streamFn != nil {
		return o, fmt.Errorf("%w: WithStream and WithStreamFunc conflict", ErrInvalidOption)
	}
	if o.streamFn == nil {
		stream := o.stream
		o.streamFn = func(*reliar.SerializedEnvelope) string { return stream }
	}
	return o, nil
}
