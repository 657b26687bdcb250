package outbox

import (
	"context"
	"fmt"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// The dispatcher does not trust its publisher or its store to honour their
// contexts. Every call it starts has a deadline — PublishTimeout for a
// publish, StoreTimeout for each store call — plus a grace; a call still
// running then is given up: the loop resolves it as a transient failure
// (a publish), a failed write or claim (a store call), frees what it held,
// and ignores the call's result when it finally comes. The goroutine of such
// a call keeps running until the call returns; Health.StuckCalls counts
// those, and Metrics.CallGivenUp counts every call given up.

// callGrace is how long past its deadline the dispatcher waits for a call
// that ignores its context: a tenth of the timeout, between 10ms and 1s.
func callGrace(timeout time.Duration) time.Duration {
	return min(max(timeout/10, 10*time.Millisecond), time.Second)
}

// notReturnedError is the failure recorded for a call given up.
type notReturnedError struct {
	call    string
	timeout time.Duration
}

func (e *notReturnedError) Error() string {
	return fmt.Sprintf("outbox: %s call did not return within %v plus a grace of %v (it ignores its context); the dispatcher stopped waiting and will ignore its result",
		e.call, e.timeout, callGrace(e.timeout))
}

// FailureKind makes a call that did not return a transient failure.
func (e *notReturnedError) FailureKind() reliar.FailureKind { return reliar.FailureTransient }

// pubWatch is the deadline of one publish call: a Publish of one row, or a
// PublishBatch of several.
type pubWatch struct {
	call uint64
	at   time.Time
	rows []*trackedRow
}

// live reports whether the call is still publishing some of its rows.
func (w *pubWatch) live() bool {
	for _, row := range w.rows {
		if row.call == w.call && row.state == rowPublishing {
			return true
		}
	}
	return false
}

// watchPublish records the deadline of a publish call of rows started now.
// A batch call may republish its rows one at a time after a panic, within a
// second PublishTimeout.
func (l *loop) watchPublish(now time.Time, rows []*trackedRow) uint64 {
	l.pubSeq++
	timeout := l.s.PublishTimeout
	if l.d.batchPub != nil {
		timeout *= 2
	}
	for _, row := range rows {
		row.call = l.pubSeq
	}
	l.pubWatches = append(l.pubWatches, pubWatch{call: l.pubSeq, at: now.Add(timeout + callGrace(l.s.PublishTimeout)), rows: rows})
	return l.pubSeq
}

// giveUpOverdue gives up every call past its deadline plus grace.
func (l *loop) giveUpOverdue(now time.Time) {
	for len(l.pubWatches) > 0 {
		w := &l.pubWatches[0]
		if !w.live() {
			l.popWatch()
			continue
		}
		if now.Before(w.at) {
			break
		}
		err := &notReturnedError{call: "publish", timeout: l.s.PublishTimeout}
		var ids []reliar.MessageID
		for _, row := range w.rows {
			if row.call == w.call && row.state == rowPublishing {
				ids = append(ids, row.rec.Envelope.ID)
				l.onPublishedRow(row.rec.Lease(), err, now.Sub(w.at), now)
			}
		}
		l.givenUp[w.call] = struct{}{}
		l.callGivenUp("publish", "ids", len(ids), "first_id", ids[0])
		l.popWatch()
	}
	for _, c := range l.calls {
		if c.overdue(now) {
			c.giveUp(now)
		}
	}
}

func (l *loop) popWatch() {
	l.pubWatches[0] = pubWatch{}
	l.pubWatches = l.pubWatches[1:]
	if len(l.pubWatches) == 0 {
		l.pubWatches = l.pubWatches[:0:0]
	}
}

// nextGiveUp is the earliest deadline of a call in flight, or zero.
func (l *loop) nextGiveUp() time.Time {
	var t time.Time
	consider := func(x time.Time) {
		if t.IsZero() || x.Before(t) {
			t = x
		}
	}
	for i := range l.pubWatches {
		// The first live call has the earliest deadline: calls start in
		// order and share their timeout.
		if l.pubWatches[i].live() {
			consider(l.pubWatches[i].at)
			break
		}
	}
	for _, c := range l.calls {
		if c.running {
			consider(c.giveUpAt)
		}
	}
	return t
}

// callGivenUp counts a call given up; its goroutine is stuck until it
// returns.
func (l *loop) callGivenUp(call string, attrs ...any) {
	l.stuck++
	l.d.metrics.CallGivenUp(call)
	l.d.updateHealth(func(h *Health) { h.StuckCalls = l.stuck })
	l.log.Error("a call ignored its context past its deadline; the dispatcher stopped waiting for it (its goroutine runs on until it returns)",
		append([]any{"call", call, "stuck_calls", l.stuck}, attrs...)...)
}

// lateResult notes the result of a call given up: its goroutine is free.
func (l *loop) lateResult(call string) {
	l.stuck--
	l.d.updateHealth(func(h *Health) { h.StuckCalls = l.stuck })
	l.log.Info("a call given up earlier returned; its result is ignored", "call", call, "stuck_calls", l.stuck)
}

// releaseLate releases the rows a claim took after the dispatcher had given
// it up: nobody tracks them, so they would otherwise wait for their lease.
func (l *loop) releaseLate(r acquireResult) {
	b := r.batch
	if r.err != nil || len(b.Records) == 0 {
		return
	}
	leases := make([]outboxdriver.Lease, len(b.Records))
	for i := range b.Records {
		leases[i] = b.Records[i].Lease()
	}
	l.log.Warn("releasing the rows of a claim that returned after it was given up", "rows", len(leases))
	l.goStore(func(ctx context.Context) { _, _ = l.d.store.Release(ctx, leases) })
}
