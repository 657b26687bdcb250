package relay

import (
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox"
)

// fanout feeds every one of its Metrics: the dispatcher takes one Metrics
// hook, and the relay feeds Prometheus and OpenTelemetry at once.
type fanout []outbox.Metrics

var _ outbox.Metrics = fanout(nil)

func (f fanout) Claimed(n int) {
	for _, m := range f {
		m.Claimed(n)
	}
}

func (f fanout) Published(messageType string, took time.Duration) {
	for _, m := range f {
		m.Published(messageType, took)
	}
}

func (f fanout) PublishFailed(messageType string, kind reliar.FailureKind, took time.Duration) {
	for _, m := range f {
		m.PublishFailed(messageType, kind, took)
	}
}

func (f fanout) Retried(kind reliar.FailureKind) {
	for _, m := range f {
		m.Retried(kind)
	}
}

func (f fanout) Dead(reason outbox.DeadReason, n int) {
	for _, m := range f {
		m.Dead(reason, n)
	}
}

func (f fanout) OutcomeWriteFailed(n int) {
	for _, m := range f {
		m.OutcomeWriteFailed(n)
	}
}

func (f fanout) LeaseShortfall(n int) {
	for _, m := range f {
		m.LeaseShortfall(n)
	}
}

func (f fanout) Abandoned(n int) {
	for _, m := range f {
		m.Abandoned(n)
	}
}

func (f fanout) ReleasedAtDrain(n int) {
	for _, m := range f {
		m.ReleasedAtDrain(n)
	}
}

func (f fanout) BreakerOpen(open bool) {
	for _, m := range f {
		m.BreakerOpen(open)
	}
}

func (f fanout) RedeliveryOutsideDedup(n int) {
	for _, m := range f {
		m.RedeliveryOutsideDedup(n)
	}
}

func (f fanout) Stats(s outbox.Stats) {
	for _, m := range f {
		m.Stats(s)
	}
}

func (f fanout) CallGivenUp(call string) {
	for _, m := range f {
		m.CallGivenUp(call)
	}
}

func (f fanout) InvalidBatchResults(n int) {
	for _, m := range f {
		m.InvalidBatchResults(n)
	}
}
