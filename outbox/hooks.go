package outbox

import (
	"context"
	"time"

	"github.com/reliar/reliar"
)

// Metrics receives the dispatcher's and maintainer's measurements. Embed
// NoopMetrics in an implementation to pick only the methods you need. The
// Prometheus and OpenTelemetry adapters live in their own modules.
type Metrics interface {
	// Claimed counts rows returned by claims.
	Claimed(n int)
	// Published counts one message published, by type, and how long the
	// publish call took.
	Published(messageType string, took time.Duration)
	// PublishFailed observes a failed publish call's duration.
	PublishFailed(messageType string, kind reliar.FailureKind, took time.Duration)
	// Retried counts a failure that was scheduled for another attempt.
	Retried(kind reliar.FailureKind)
	// Dead counts rows moved to dead, by reason.
	Dead(reason DeadReason, n int)
	// OutcomeWriteFailed counts store calls recording outcomes that failed.
	OutcomeWriteFailed(n int)
	// LeaseShortfall counts rows a lease renewal did not extend (lost to
	// another worker, or finished meanwhile).
	LeaseShortfall(n int)
	// Abandoned counts rows whose outcome could not be written for a whole
	// lease and were left to their lease.
	Abandoned(n int)
	// ReleasedAtDrain counts rows released at shutdown.
	ReleasedAtDrain(n int)
	// BreakerOpen reports the circuit breaker's state.
	BreakerOpen(open bool)
	// RedeliveryOutsideDedup counts lapsed reclaims whose previous claim is
	// older than the broker's dedup window: if the previous holder did
	// publish, the broker will not drop the duplicate.
	RedeliveryOutsideDedup(n int)
	// Stats reports the table's gauges.
	Stats(s Stats)
	// CallGivenUp counts a call the dispatcher stopped waiting for because
	// it ignored its context past its deadline plus a grace: call is
	// "publish", "claim", "outcome", "renew", "release", "stats" or
	// "subscribe". Its goroutine may still be running (Health.StuckCalls).
	CallGivenUp(call string)
	// InvalidBatchResults counts a PublishBatch call that returned a result
	// slice of the wrong length; n is the number of rows of the batch, all
	// failed transiently.
	InvalidBatchResults(n int)
}

// NoopMetrics discards every measurement.
type NoopMetrics struct{}

var _ Metrics = NoopMetrics{}

func (NoopMetrics) Claimed(int)                                             {}
func (NoopMetrics) Published(string, time.Duration)                         {}
func (NoopMetrics) PublishFailed(string, reliar.FailureKind, time.Duration) {}
func (NoopMetrics) Retried(reliar.FailureKind)                              {}
func (NoopMetrics) Dead(DeadReason, int)                                    {}
func (NoopMetrics) OutcomeWriteFailed(int)                                  {}
func (NoopMetrics) LeaseShortfall(int)                                      {}
func (NoopMetrics) Abandoned(int)                                           {}
func (NoopMetrics) ReleasedAtDrain(int)                                     {}
func (NoopMetrics) BreakerOpen(bool)                                        {}
func (NoopMetrics) RedeliveryOutsideDedup(int)                              {}
func (NoopMetrics) Stats(Stats)                                             {}
func (NoopMetrics) CallGivenUp(string)                                      {}
func (NoopMetrics) InvalidBatchResults(int)                                 {}

// Tracer opens the dispatcher's spans: "reliar.outbox.claim" around each
// claim, "reliar.outbox.publish" around each publish, the latter a child of
// the trace context captured at enqueue (env.Metadata.Trace), and
// "reliar.outbox.outcome" around each outcome write. The OpenTelemetry
// adapter implements it.
type Tracer interface {
	StartClaim(ctx context.Context, worker string, requested int) (context.Context, Span)
	StartPublish(ctx context.Context, env *reliar.SerializedEnvelope) (context.Context, Span)
	// StartOutcomeWrite opens the span of one store call recording the
	// outcomes of rows: op is "complete" or "fail".
	StartOutcomeWrite(ctx context.Context, op string, rows int) (context.Context, Span)
}

// Span is one open span. End closes it, recording err when not nil.
type Span interface {
	End(err error)
}

// NoopTracer opens no spans.
type NoopTracer struct{}

type noopSpan struct{}

func (noopSpan) End(error) {}

// StartClaim returns ctx and a span that does nothing.
func (NoopTracer) StartClaim(ctx context.Context, _ string, _ int) (context.Context, Span) {
	return ctx, noopSpan{}
}

// StartPublish returns ctx and a span that does nothing.
func (NoopTracer) StartPublish(ctx context.Context, _ *reliar.SerializedEnvelope) (context.Context, Span) {
	return ctx, noopSpan{}
}

// StartOutcomeWrite returns ctx and a span that does nothing.
func (NoopTracer) StartOutcomeWrite(ctx context.Context, _ string, _ int) (context.Context, Span) {
	return ctx, noopSpan{}
}
