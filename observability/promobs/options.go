package promobs

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
)

// ErrInvalidOption is matched (with errors.Is) by the error New returns for
// a bad option.
var ErrInvalidOption = errors.New("reliar prometheus: invalid option")

// DefaultMaxMessageTypes is how many distinct message types get a series of
// their own unless WithMaxMessageTypes says otherwise.
const DefaultMaxMessageTypes = 100

// DefaultBuckets are the publish duration histogram's upper bounds, in
// seconds: 0.5 ms to 10 s.
var DefaultBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// Option configures New: one of the With functions below. Each checks its
// argument; a bad one makes New fail with an error wrapping
// ErrInvalidOption. A nil Option is ignored.
type Option func(*config) error

type config struct {
	constLabels     prometheus.Labels
	maxMessageTypes int
	messageTypes    []string
	buckets         []float64
}

func defaultConfig() config {
	return config{maxMessageTypes: DefaultMaxMessageTypes, buckets: DefaultBuckets}
}

// WithConstLabels adds labels with fixed values to every family, for
// example the outbox table's name. Two Metrics that differ in a constant
// label value can share one Registerer. Names must be non-empty UTF-8, not
// reserved (a "__" prefix) and not one of the variable labels
// (message_type, kind, reason, tenant_id, le); values must be UTF-8.
func WithConstLabels(labels prometheus.Labels) Option {
	return func(c *config) error {
		for name, value := range labels {
			switch {
			case slices.Contains([]string{"message_type", "kind", "reason", "tenant_id", "le"}, name):
				return fmt.Errorf("%w: constant label %q is one of the variable labels", ErrInvalidOption, name)
			case name == "" || !utf8.ValidString(name) || strings.HasPrefix(name, "__"):
				return fmt.Errorf("%w: constant label name %q is empty, reserved or not UTF-8", ErrInvalidOption, name)
			case !utf8.ValidString(value):
				return fmt.Errorf("%w: constant label %q has a value that is not UTF-8", ErrInvalidOption, name)
			}
		}
		c.constLabels = maps.Clone(labels)
		return nil
	}
}

// WithMaxMessageTypes caps how many distinct message types get a series of
// their own; later types are counted under OtherMessageType. Defaults to
// DefaultMaxMessageTypes. n must be positive.
func WithMaxMessageTypes(n int) Option {
	return func(c *config) error {
		if n <= 0 {
			return fmt.Errorf("%w: max message types must be positive, got %d", ErrInvalidOption, n)
		}
		c.maxMessageTypes = n
		return nil
	}
}

// WithMessageTypes declares message types up front: their series exist from
// the start and they keep them even past the cap. They count toward the cap.
// Each must be non-empty UTF-8 and not OtherMessageType.
func WithMessageTypes(types ...string) Option {
	return func(c *config) error {
		for _, t := range types {
			if t == "" || t == OtherMessageType || !utf8.ValidString(t) {
				return fmt.Errorf("%w: message type %q is empty, %q or not UTF-8", ErrInvalidOption, t, OtherMessageType)
			}
		}
		c.messageTypes = append(c.messageTypes, types...)
		return nil
	}
}

// WithBuckets replaces DefaultBuckets as the publish duration histogram's
// upper bounds, in seconds. They must be increasing.
func WithBuckets(bounds ...float64) Option {
	return func(c *config) error {
		if len(bounds) == 0 {
			return fmt.Errorf("%w: no histogram buckets", ErrInvalidOption)
		}
		for i := 1; i < len(bounds); i++ {
			if bounds[i] <= bounds[i-1] {
				return fmt.Errorf("%w: histogram buckets must be increasing, got %v", ErrInvalidOption, bounds)
			}
		}
		c.buckets = slices.Clone(bounds)
		return nil
	}
}
