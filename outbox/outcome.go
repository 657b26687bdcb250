package outbox

import (
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

type writeResult struct {
	completed, failed    []outboxdriver.Lease
	completeErr, failErr error
	completedN, failedN  int64
}

func (r writeResult) withErr(err error) writeResult {
	return writeResult{completed: r.completed, failed: r.failed, completeErr: err, failErr: err}
}

// writeDue is when the next outcome write is due, if outcomes wait.
func (l *loop) writeDue() (time.Time, bool) { return l.nextWrite, len(l.resolved) > 0 }

// maybeWrite writes the resolved outcomes: at once when fresh, paced after a
// failed write, and never more than one write at a time. Outcomes that
// resolve while a write is in flight join the next one. A row whose outcome
// could not be written for a whole Lease is abandoned to its lease.
func (l *loop) maybeWrite(now time.Time) {
	if at, ok := l.write.due(); !ok || now.Before(at) {
		return
	}
	var completes []outboxdriver.Lease
	var fails []outboxdriver.FailedOutcome
	var abandoned []reliar.MessageID
	keep := 0
	for _, row := range l.resolved {
		if l.noWrites || now.Sub(row.resolvedAt) >= l.s.Lease {
			l.drop(row.rec.Lease())
			abandoned = append(abandoned, row.rec.Envelope.ID)
			continue
		}
		keep++
		row.state = rowWriting
		if row.ok {
			completes = append(completes, row.rec.Lease())
		} else {
			fails = append(fails, row.fail)
		}
	}
	l.resolved = nil
	if len(abandoned) > 0 {
		l.emit(EventAbandoned, abandoned, nil)
		l.log.Warn("outcomes could not be written; rows left to their lease (a duplicate may follow)", "rows", len(abandoned))
		l.d.metrics.Abandoned(len(abandoned))
	}
	if keep == 0 {
		return
	}
	store, tracer := l.d.store, l.d.tracer
	budget := l.budget()
	calls := 0
	var held writeResult
	if len(completes) > 0 {
		calls++
		held.completed = completes
	}
	if len(fails) > 0 {
		calls++
		held.failed = make([]outboxdriver.Lease, len(fails))
		for i, f := range fails {
			held.failed[i] = f.Lease
		}
	}
	gen := l.write.start(now, l.callTimeout(calls), held)
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		var r writeResult
		if len(completes) > 0 {
			ctx, cancel := budget.context()
			ctx, span := tracer.StartOutcomeWrite(ctx, "complete", len(completes))
			r.completedN, r.completeErr = store.Complete(ctx, completes)
			span.End(r.completeErr)
			cancel()
			r.completed = completes
		}
		if len(fails) > 0 {
			ctx, cancel := budget.context()
			ctx, span := tracer.StartOutcomeWrite(ctx, "fail", len(fails))
			r.failedN, r.failErr = store.Fail(ctx, fails)
			span.End(r.failErr)
			cancel()
			r.failed = held.failed
		}
		l.write.report(gen, r)
	}()
}

// written applies the result of the outcome write in flight.
func (l *loop) written(r writeResult, now time.Time) {
	failed := false
	l.settle(EventCompleted, r.completed, r.completeErr, r.completedN, now, &failed)
	l.settle(EventFailed, r.failed, r.failErr, r.failedN, now, &failed)
	switch {
	case failed:
		l.nextWrite = now.Add(l.writePace)
	case !l.draining && len(r.completed)+len(r.failed) < max(l.s.BatchSize/16, 2) && len(l.rows) <= l.s.MaxInFlight/4:
		// A write of a few rows, as when messages trickle in: every
		// outcome write is a commit, which on SQLite holds the one write
		// lock the producers need while it waits for the disk. Waiting
		// nine times as long as it took before the next keeps such writes
		// to a tenth of the time and lets more outcomes share the next.
		// Writes of many rows, or while many rows are held (a backlog
		// draining), go back to back.
		l.nextWrite = now.Add(min(9*now.Sub(l.write.startedAt), l.writePace))
	default:
		l.nextWrite = time.Time{}
	}
}

// settle applies the result of one outcome write to its rows.
func (l *loop) settle(kind EventKind, leases []outboxdriver.Lease, err error, affected int64, now time.Time, failed *bool) {
	if len(leases) == 0 {
		return
	}
	if err != nil {
		*failed = true
		l.d.metrics.OutcomeWriteFailed(1)
		l.emit(EventOutcomeWriteFailed, idsOf(leases), err)
		for _, lease := range leases {
			if row := l.rows[lease]; row != nil && row.state == rowWriting {
				row.state = rowResolved
				l.resolved = append(l.resolved, row)
			}
		}
		if isPermanent(err) {
			l.noWrites = true
			l.fail(err, now)
			return
		}
		l.log.Warn("outcome write failed; will retry", "rows", len(leases), "retry_in", l.writePace, "error", err)
		return
	}
	l.d.updateHealth(func(h *Health) { h.LastOutcomeWrite = now })
	l.emit(kind, idsOf(leases), nil)
	if affected < int64(len(leases)) {
		l.log.Debug("outcome write fenced off for rows reclaimed meanwhile", "rows", int64(len(leases))-affected)
	}
	for _, lease := range leases {
		row := l.rows[lease]
		if row == nil || row.state != rowWriting {
			continue
		}
		l.drop(lease)
		switch {
		case row.ok:
		case row.fail.DeadReason != "":
			l.d.metrics.Dead(row.fail.DeadReason, 1)
		default:
			l.d.metrics.Retried(row.kind)
		}
	}
}
