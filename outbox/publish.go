package outbox

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// publishResult reports one publish call: a single row (lease, err) or a
// batch (leases, errs, one error per lease; nil is success).
type publishResult struct {
	call   uint64
	lease  outboxdriver.Lease
	err    error
	leases []outboxdriver.Lease
	errs   []error
	took   time.Duration
}

// PanicError is the failure recorded for a publish that panicked. It is
// permanent: the row goes dead at once, with last_error "publisher panicked:
// " followed by the first line of the panic value.
type PanicError struct {
	// Value is the first line of the panic value, at most 256 bytes.
	Value string
}

func (e *PanicError) Error() string { return "publisher panicked: " + e.Value }

// FailureKind makes a panic a permanent failure.
func (e *PanicError) FailureKind() reliar.FailureKind { return reliar.FailurePermanent }

func newPanicError(v any) *PanicError {
	s := fmt.Sprint(v)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return &PanicError{Value: outboxdriver.TruncateUTF8(s, 256)}
}

// startPublishes starts the queued rows. The concurrency slot is counted
// before the goroutine starts, so a row is either started or still queued.
// A BatchPublisher receives the queued rows as one call.
func (l *loop) startPublishes(now time.Time) {
	// Rows started in this call share one PublishTimeout context: they
	// start at the same moment, so each is still bounded by PublishTimeout
	// from its start, and a claim costs one timer instead of one per row.
	var shared *sharedDeadline
	for len(l.queue) > 0 && l.publishing < l.s.MaxInFlight {
		n := min(len(l.queue), l.s.MaxInFlight-l.publishing)
		if l.d.batchPub == nil {
			n = 1
		}
		batch := l.queue[:n:n]
		l.queue = l.queue[n:]
		l.publishing += n
		l.wg.Add(1)
		// Publish goroutines read the envelope only; the loop never
		// writes a row's record after the claim, so they may share it.
		call := l.watchPublish(now, batch)
		if l.d.batchPub == nil {
			row := batch[0]
			row.state = rowPublishing
			if shared == nil {
				shared = l.newSharedDeadline()
			}
			shared.users.Add(1)
			go l.publishOne(shared, call, row.rec.Lease(), &row.rec.Envelope)
			continue
		}
		leases := make([]outboxdriver.Lease, n)
		envs := make([]*reliar.SerializedEnvelope, n)
		for i, row := range batch {
			row.state = rowPublishing
			leases[i] = row.rec.Lease()
			envs[i] = &row.rec.Envelope
		}
		go l.publishBatch(call, leases, envs)
	}
	if shared != nil {
		shared.done() // the loop's own reference: every row has started
	}
	if len(l.queue) == 0 {
		l.queue = nil
	}
}

func (l *loop) publishOne(shared *sharedDeadline, call uint64, lease outboxdriver.Lease, env *reliar.SerializedEnvelope) {
	defer l.wg.Done()
	start := time.Now()
	err := l.callPublish(shared.ctx, env)
	shared.done()
	l.published.put(publishResult{call: call, lease: lease, err: err, took: time.Since(start)})
}

func (l *loop) publishBatch(call uint64, leases []outboxdriver.Lease, envs []*reliar.SerializedEnvelope) {
	defer l.wg.Done()
	start := time.Now()
	errs, panicked := l.callBatch(envs)
	if panicked {
		// Find the culprit: publish the rows one at a time, all within a
		// second PublishTimeout (the call's deadline allows for it).
		errs = make([]error, len(envs))
		ctx, cancel := context.WithTimeout(l.pubCtx, l.s.PublishTimeout)
		for i, env := range envs {
			errs[i] = l.callPublish(ctx, env)
		}
		cancel()
	}
	l.published.put(publishResult{call: call, leases: leases, errs: errs, took: time.Since(start)})
}

// sharedDeadline is one PublishTimeout context for the rows started
// together; the last of them to finish cancels it.
type sharedDeadline struct {
	ctx    context.Context
	cancel context.CancelFunc
	users  atomic.Int32
}

// newSharedDeadline returns a deadline holding one reference for the loop,
// released once it has started every row, so that an early finisher cannot
// cancel the context before the last row starts.
func (l *loop) newSharedDeadline() *sharedDeadline {
	ctx, cancel := context.WithTimeout(l.pubCtx, l.s.PublishTimeout)
	s := &sharedDeadline{ctx: ctx, cancel: cancel}
	s.users.Add(1)
	return s
}

func (s *sharedDeadline) done() {
	if s.users.Add(-1) == 0 {
		s.cancel()
	}
}

// callPublish publishes one envelope within ctx's deadline, turning a panic
// into a *PanicError.
func (l *loop) callPublish(ctx context.Context, env *reliar.SerializedEnvelope) (err error) {
	ctx, span := l.d.tracer.StartPublish(ctx, env)
	defer func() {
		if v := recover(); v != nil {
			err = newPanicError(v)
			l.log.Debug("publisher panicked", "id", env.ID, "panic", err, "stack", string(debug.Stack()))
		}
		span.End(err)
	}()
	return l.d.pub.Publish(ctx, env)
}

// callBatch publishes envelopes in one PublishBatch call within
// PublishTimeout. A result count that does not match is a transient failure
// of every row (taking it for success could lose messages), counted, and
// logged at error once per publisher.
func (l *loop) callBatch(envs []*reliar.SerializedEnvelope) (errs []error, panicked bool) {
	ctx, cancel := context.WithTimeout(l.pubCtx, l.s.PublishTimeout)
	defer cancel()
	// One publish span per envelope, ended with that envelope's result.
	spans := make([]Span, len(envs))
	for i, env := range envs {
		_, spans[i] = l.d.tracer.StartPublish(ctx, env)
	}
	defer func() {
		if v := recover(); v != nil {
			l.log.Debug("batch publisher panicked; publishing the batch one at a time", "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			errs, panicked = nil, true
		}
		for i, span := range spans {
			var err error
			if panicked {
				err = errors.New("batch publisher panicked; retried one at a time")
			} else {
				err = errs[i]
			}
			span.End(err)
		}
	}()
	errs = l.d.batchPub.PublishBatch(ctx, envs)
	if len(errs) != len(envs) {
		err := fmt.Errorf("outbox: batch publisher returned %d results for %d messages; every row of the batch is retried", len(errs), len(envs))
		l.d.metrics.InvalidBatchResults(len(envs))
		if l.d.firstInvalidBatch() {
			l.log.Error("batch publisher returned a result slice of the wrong length: PublishBatch must return exactly one error (nil for success) per envelope, in order; every row of such a batch fails transiently and is retried, so nothing is published until this is fixed (logged once per publisher)",
				"results", len(errs), "messages", len(envs), "publisher", fmt.Sprintf("%T", l.d.pub))
		}
		errs = make([]error, len(envs))
		for i := range errs {
			errs[i] = err
		}
	}
	return errs, false
}

// onPublished turns publish results into outcomes waiting to be written.
// Results of rows no longer publishing (cut off at drain) are ignored, and
// so are those of calls given up.
func (l *loop) onPublished(r publishResult, now time.Time) {
	if _, late := l.givenUp[r.call]; late {
		delete(l.givenUp, r.call)
		l.lateResult("publish")
		return
	}
	if r.leases == nil {
		l.onPublishedRow(r.lease, r.err, r.took, now)
		return
	}
	for i, lease := range r.leases {
		l.onPublishedRow(lease, r.errs[i], r.took, now)
	}
}

func (l *loop) onPublishedRow(lease outboxdriver.Lease, err error, took time.Duration, now time.Time) {
	row := l.rows[lease]
	if row == nil || row.state != rowPublishing {
		return
	}
	l.publishing--
	env := &row.rec.Envelope
	if l.emitted() {
		if err == nil {
			l.emit(EventPublished, []reliar.MessageID{lease.ID}, nil)
		} else {
			l.emit(EventPublishFailed, []reliar.MessageID{lease.ID}, err)
		}
	}
	if err == nil {
		l.d.metrics.Published(env.MessageType, took)
		if l.breaker.success() {
			l.log.Info("circuit breaker closed: a publish succeeded")
			l.d.metrics.BreakerOpen(false)
			l.d.updateHealth(func(h *Health) { h.BreakerOpen, h.BreakerCause = false, "" })
			l.nextClaim = now
		}
		l.resolve(row, true, now)
		return
	}
	kind := reliar.KindOf(err)
	var pe *PanicError
	isPanic := errors.As(err, &pe)
	l.d.metrics.PublishFailed(env.MessageType, kind, took)
	if (kind == reliar.FailureTransient || isPanic) && l.breaker.failure(env.ID) {
		l.log.Warn("circuit breaker open: too many consecutive transient publish failures; probing", "threshold", l.s.BreakerThreshold, "probe_every", l.s.IdlePollInterval)
		l.d.metrics.BreakerOpen(true)
		l.d.updateHealth(func(h *Health) { h.BreakerOpen = true })
		l.nextClaim = now.Add(l.s.IdlePollInterval)
	}
	if l.breaker.open && (kind == reliar.FailureTransient || isPanic) {
		cause := outboxdriver.TruncateUTF8(outboxdriver.SanitizeError(err.Error()), 512)
		l.d.updateHealth(func(h *Health) { h.BreakerCause = cause })
	}
	if l.breaker.open && kind == reliar.FailureTransient {
		// The broker is down, not the message: record nothing.
		l.release(row)
		return
	}
	d := l.s.Retry.Decide(Failure{Err: err, Kind: kind, Attempts: row.rec.Attempts, MessageType: env.MessageType})
	row.fail = outboxdriver.FailedOutcome{Lease: lease, Error: outboxdriver.SanitizeError(err.Error())}
	row.kind = kind
	if d.Dead() {
		row.fail.DeadReason = d.Reason
		l.log.Warn("publish failed; moving to dead", "id", env.ID, "type", env.MessageType, "reason", d.Reason, "attempt", env.Attempt, "error", err)
	} else {
		row.fail.RetryAfter = d.Delay
		l.log.Info("publish failed; will retry", "id", env.ID, "type", env.MessageType, "kind", kind.String(), "attempt", env.Attempt, "delay", d.Delay, "error", err)
	}
	l.resolve(row, false, now)
}

func (l *loop) resolve(row *trackedRow, ok bool, now time.Time) {
	row.state = rowResolved
	row.ok = ok
	row.resolvedAt = now
	l.resolved = append(l.resolved, row)
}

// invalidBatchPublishers remembers the publishers already logged for a
// wrong result count, so that several dispatchers sharing one publisher log
// it once.
var invalidBatchPublishers sync.Map

// firstInvalidBatch reports whether the publisher's wrong result count is
// to be logged: the first time for the publisher when it can be a map key
// (a pointer, as publishers are), else the first time for this dispatcher.
func (d *Dispatcher) firstInvalidBatch() bool {
	if !d.invalidLogged.CompareAndSwap(false, true) {
		return false
	}
	if !reflect.TypeOf(d.pub).Comparable() {
		return true
	}
	_, seen := invalidBatchPublishers.LoadOrStore(d.pub, struct{}{})
	return !seen
}
