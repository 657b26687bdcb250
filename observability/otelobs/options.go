package otelobs

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
)

// ErrInvalidOption is matched (with errors.Is) by the error NewTracer or
// NewMetrics returns for a bad option, or for an option that does not apply
// to that constructor.
var ErrInvalidOption = errors.New("reliar otel: invalid option")

// DefaultMaxMessageTypes is how many distinct message types get their own
// reliar.message_type value unless WithMaxMessageTypes says otherwise.
const DefaultMaxMessageTypes = 100

// DefaultBuckets are the publish duration histogram's bucket boundaries, in
// seconds: 0.5 ms to 10 s.
var DefaultBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// Option configures NewTracer and NewMetrics. Each With function says which
// of the two it applies to; given to the other, it makes the constructor
// fail with ErrInvalidOption. A nil Option is ignored.
type Option func(*options) error

// constructor names the constructor an Option is applied by.
type constructor string

const (
	forTracer  constructor = "NewTracer"
	forMetrics constructor = "NewMetrics"
)

// options is what the Options set, for either constructor.
type options struct {
	of              constructor
	maxMessageTypes int
	attrs           []attribute.KeyValue
	messagingSystem string
}

// newOptions applies opts for constructor of.
func newOptions(of constructor, opts []Option) (options, error) {
	o := options{of: of, maxMessageTypes: DefaultMaxMessageTypes}
	for _, opt := range opts {
		if opt == nil {
			continue
		}
		if err := opt(&o); err != nil {
			return options{}, err
		}
	}
	return o, nil
}

// only refuses option name unless it is applied by want.
func (o *options) only(name string, want constructor) error {
	if o.of != want {
		return fmt.Errorf("%w: %s applies to %s, not %s", ErrInvalidOption, name, want, o.of)
	}
	return nil
}

// WithMaxMessageTypes caps how many distinct message types get their own
// reliar.message_type value; later types are recorded as OtherMessageType.
// Defaults to DefaultMaxMessageTypes. n must be positive. It applies to
// NewMetrics only: spans carry every type as it is.
func WithMaxMessageTypes(n int) Option {
	return func(o *options) error {
		if err := o.only("WithMaxMessageTypes", forMetrics); err != nil {
			return err
		}
		if n <= 0 {
			return fmt.Errorf("%w: max message types must be positive, got %d", ErrInvalidOption, n)
		}
		o.maxMessageTypes = n
		return nil
	}
}

// WithAttributes adds attributes to every measurement (NewMetrics) or to
// every span (NewTracer), for example the outbox table's name. They must be
// valid and must not use a key the instruments or spans set themselves
// (reliar.message_type, reliar.failure_kind, reliar.dead_reason,
// reliar.worker.id, reliar.claim.requested, reliar.attempt, messaging.*).
func WithAttributes(attrs ...attribute.KeyValue) Option {
	return func(o *options) error {
		for _, kv := range attrs {
			if reservedKey(kv.Key) {
				return fmt.Errorf("%w: attribute %q is set by the instruments and spans", ErrInvalidOption, kv.Key)
			}
			if !kv.Valid() {
				return fmt.Errorf("%w: attribute %q is invalid", ErrInvalidOption, kv.Key)
			}
		}
		o.attrs = append(o.attrs, attrs...)
		return nil
	}
}

// reservedKey reports the keys the instruments and spans set.
func reservedKey(k attribute.Key) bool {
	switch k {
	case keyMessageType, keyFailureKind, keyDeadReason, keyWorkerID, keyClaimRequested, keyAttempt:
		return true
	}
	return strings.HasPrefix(string(k), "messaging.")
}

// WithMessagingSystem sets the messaging.system attribute of publish and
// outcome spans, for example "kafka" or "rabbitmq", naming the broker the
// publisher writes to. system must be non-empty valid UTF-8. It applies to
// NewTracer only.
func WithMessagingSystem(system string) Option {
	return func(o *options) error {
		if err := o.only("WithMessagingSystem", forTracer); err != nil {
			return err
		}
		if system == "" || !utf8.ValidString(system) {
			return fmt.Errorf("%w: messaging system must be non-empty UTF-8, got %q", ErrInvalidOption, system)
		}
		o.messagingSystem = system
		return nil
	}
}
