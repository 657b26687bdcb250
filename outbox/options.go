package outbox

import (
	"errors"
	"fmt"
	"log/slog"
)

// ErrInvalidOption is matched (with errors.Is) by the error New or
// NewMaintainer returns for an invalid option.
var ErrInvalidOption = errors.New("outbox: invalid option")

// Option configures an optional part of a Dispatcher (New) or a Maintainer
// (NewMaintainer). Every option validates its argument; one that does not
// apply to the constructor it is given to is refused, so that a mistake is
// an error rather than a silent no-op.
type Option func(*options) error

// target is the constructor options are applied for.
type target int

const (
	forDispatcher target = iota + 1
	forMaintainer
)

func (t target) String() string {
	if t == forMaintainer {
		return "NewMaintainer"
	}
	return "New"
}

// options holds what the options of both constructors set.
type options struct {
	target  target
	logger  *slog.Logger
	metrics Metrics
	tracer  Tracer
	events  EventSink
	noWake  bool
	inbox   InboxPurger
}

// applyOptions runs opts for target t and returns what they set, with the
// defaults for the rest. Nil options are skipped.
func applyOptions(t target, opts []Option) (*options, error) {
	o := &options{target: t, logger: slog.Default(), metrics: NoopMetrics{}, tracer: NoopTracer{}}
	var errs []error
	for _, opt := range opts {
		if opt == nil {
			continue
		}
		if err := opt(o); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return o, nil
}

func invalidOption(name, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrInvalidOption, name, fmt.Sprintf(format, args...))
}

// only refuses an option given to a constructor it does not apply to.
func (o *options) only(name string, t target) error {
	if o.target != t {
		return invalidOption(name, "applies to %v, not to %v", t, o.target)
	}
	return nil
}

// WithLogger logs to l instead of slog.Default(). It applies to New and
// NewMaintainer.
func WithLogger(l *slog.Logger) Option {
	return func(o *options) error {
		if l == nil {
			return invalidOption("WithLogger", "nil logger (omit the option for slog.Default())")
		}
		o.logger = l
		return nil
	}
}

// WithMetrics sends measurements to m. It applies to New and NewMaintainer
// (which counts expired rows moved to dead).
func WithMetrics(m Metrics) Option {
	return func(o *options) error {
		if m == nil {
			return invalidOption("WithMetrics", "nil Metrics (omit the option to measure nothing)")
		}
		o.metrics = m
		return nil
	}
}

// WithTracer opens the dispatcher's spans with t. It applies to New.
func WithTracer(t Tracer) Option {
	return func(o *options) error {
		if err := o.only("WithTracer", forDispatcher); err != nil {
			return err
		}
		if t == nil {
			return invalidOption("WithTracer", "nil Tracer (omit the option to open no spans)")
		}
		o.tracer = t
		return nil
	}
}

// WithEvents reports every claim and outcome to sink, with the message ids
// (see Event). It applies to New.
func WithEvents(sink EventSink) Option {
	return func(o *options) error {
		if err := o.only("WithEvents", forDispatcher); err != nil {
			return err
		}
		if sink == nil {
			return invalidOption("WithEvents", "nil EventSink")
		}
		o.events = sink
		return nil
	}
}

// WithoutWakeups stops the dispatcher from listening to the store's
// wake-ups (for example behind PgBouncer in transaction pooling mode); it
// then finds new rows by polling alone. It applies to New.
func WithoutWakeups() Option {
	return func(o *options) error {
		if err := o.only("WithoutWakeups", forDispatcher); err != nil {
			return err
		}
		o.noWake = true
		return nil
	}
}

// WithInbox makes every maintenance pass also delete the inbox's
// processed-message records older than InboxRetention, in batches of
// BatchSize. It applies to NewMaintainer; every store's Inbox() is an
// InboxPurger.
func WithInbox(p InboxPurger) Option {
	return func(o *options) error {
		if err := o.only("WithInbox", forMaintainer); err != nil {
			return err
		}
		if p == nil {
			return invalidOption("WithInbox", "nil InboxPurger")
		}
		o.inbox = p
		return nil
	}
}
