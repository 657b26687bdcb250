package otel

import (
	"errors"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
)

// ErrInvalidOption is matched (with errors.Is) by the error NewMetrics
// returns for a bad option.
var ErrInvalidOption = errors.New("reliar otel: invalid option")

// DefaultMaxMessageTypes is how many distinct message types get their own
// reliar.message_type value unless WithMaxMessageTypes says otherwise.
const DefaultMaxMessageTypes = 100

// DefaultBuckets are the publish duration histogram's bucket boundaries, in
// seconds: 0.5 ms to 10 s.
var DefaultBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// MetricsOption configures NewMetrics.
type MetricsOption func(*metricsConfig) error

type metricsConfig struct {
	maxMessageTypes int
	attrs           []attribute.KeyValue
}

// WithMaxMessageTypes caps how many distinct message types get their own
// reliar.message_type value; later types are recorded as OtherMessageType.
// Defaults to DefaultMaxMessageTypes. n must be positive.
func WithMaxMessageTypes(n int) MetricsOption {
	return func(c *metricsConfig) error {
		if n <= 0 {
			return fmt.Errorf("%w: max message types must be positive, got %d", ErrInvalidOption, n)
		}
		c.maxMessageTypes = n
		return nil
	}
}

// WithAttributes adds attributes to every measurement, for example the
// outbox table's name. They must not use the keys the instruments set
// themselves.
func WithAttributes(attrs ...attribute.KeyValue) MetricsOption {
	return func(c *metricsConfig) error {
		for _, kv := range attrs {
			switch kv.Key {
			case keyMessageType, keyFailureKind, keyDeadReason:
				return fmt.Errorf("%w: attribute %q is set by the instruments", ErrInvalidOption, kv.Key)
			}
			if !kv.Valid() {
				return fmt.Errorf("%w: attribute %q is invalid", ErrInvalidOption, kv.Key)
			}
		}
		c.attrs = append(c.attrs, attrs...)
		return nil
	}
}

// TracerOption configures NewTracer.
type TracerOption func(*Tracer)

// WithMessagingSystem sets the messaging.system attribute of publish spans,
// for example "kafka" or "rabbitmq", naming the broker the publisher writes
// to.
func WithMessagingSystem(system string) TracerOption {
	return func(t *Tracer) {
		t.publishAttrs = append(t.publishAttrs, semconv.MessagingSystemKey.String(system))
	}
}
