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

// storeCall tracks the one store call of a kind (claim, outcome write,
// renewal, release, stats, subscription) that may be in flight. Results
// carry the generation of the call that produced them, so a result that
// arrives after its call was given up is recognised and ignored.
type storeCall struct {
	name     string
	gen      uint64
	running  bool
	giveUpAt time.Time
}

// start records a call started now that may run for budget, and returns
// its generation.
func (c *storeCall) start(now time.Time, budget time.Duration) uint64 {
	c.gen++
	c.running = true
	c.giveUpAt = now.Add(budget + callGrace(budget))
	return c.gen
}

// finish reports whether a result of generation gen belongs to the call in
// flight, and if so ends it. A false result is a late one: its call was
// given up.
func (c *storeCall) finish(gen uint64) bool {
	if !c.running || gen != c.gen {
		return false
	}
	c.running = false
	return true
}

func (c *storeCall) overdue(now time.Time) bool { return c.running && !now.Before(c.giveUpAt) }

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
	if l.acq.overdue(now) {
		l.acq.running = false
		l.callGivenUp(l.acq.name)
		l.acquired(acquireResult{err: &notReturnedError{call: "claim", timeout: l.s.StoreTimeout}, want: l.acquiring}, now)
	}
	if l.write.overdue(now) {
		l.write.running = false
		l.callGivenUp(l.write.name)
		err := &notReturnedError{call: "outcome write", timeout: l.s.StoreTimeout}
		l.written(writeResult{completed: l.writingCompletes, failed: l.writingFails, completeErr: err, failErr: err}, now)
	}
	if l.renew.overdue(now) {
		l.renew.running = false
		l.callGivenUp(l.renew.name)
		l.renewed(renewResult{err: &notReturnedError{call: "lease renewal", timeout: l.s.StoreTimeout}})
	}
	if l.rel.overdue(now) {
		l.rel.running = false
		l.callGivenUp(l.rel.name)
		l.released(releaseResult{leases: l.releasingLeases, err: &notReturnedError{call: "release", timeout: l.s.StoreTimeout}})
	}
	if l.stats.overdue(now) {
		l.stats.running = false
		l.callGivenUp(l.stats.name)
		l.statted(statsResult{err: &notReturnedError{call: "stats", timeout: l.s.StoreTimeout}})
	}
	if l.sub.overdue(now) {
		l.sub.running = false
		l.callGivenUp(l.sub.name)
		l.subCancel()
		l.subscribed(subResult{err: &notReturnedError{call: "wake-up subscription", timeout: l.s.StoreTimeout}}, now)
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
	for _, c := range []*storeCall{&l.acq, &l.write, &l.renew, &l.rel, &l.stats, &l.sub} {
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
func (l *loop) releaseLate(b outboxdriver.AcquiredBatch) {
	if len(b.Records) == 0 {
		return
	}
	leases := make([]outboxdriver.Lease, len(b.Records))
	for i := range b.Records {
		leases[i] = b.Records[i].Lease()
	}
	l.log.Warn("releasing the rows of a claim that returned after it was given up", "rows", len(leases))
	l.goStore(func(ctx context.Context) { _, _ = l.d.store.Release(ctx, leases) })
}
