package outbox

import (
	"time"

	"github.com/reliar/reliar"
)

// startDrain begins the shutdown. The drain runs in phases, at deadlines
// set here from D = now + DrainTimeout and reserve = min(StoreTimeout,
// DrainTimeout/2):
//
//  1. At once: no more claims (claimSize is 0) and no more hand-offs
//     (syncHandoff closes them); rows queued but not started are released.
//     Outcomes are written as usual throughout.
//  2. At pubDueAt = D - reserve: publishes still running are cut off and
//     their rows released (cutOffPublishes), leaving the release a whole
//     reserve to land.
//  3. At relDueAt = D - reserve/2: rows whose publish failed but whose Fail
//     has not landed are released (releaseUnwrittenFailures).
//  4. The drain ends (finished) once no row is held and no store call the
//     drain waits for is in flight, or at D; rows still held then are left
//     to their lease (finish).
//
// advanceDrain starts phases 2 and 3 when due. TestDrainPhases and
// TestDrainFinished test them.
func (l *loop) startDrain(now time.Time) {
	if l.draining {
		return
	}
	l.draining = true
	l.drainAt = now.Add(l.s.DrainTimeout)
	reserve := min(l.s.StoreTimeout, l.s.DrainTimeout/2)
	l.pubDueAt = l.drainAt.Add(-reserve)
	l.relDueAt = l.drainAt.Add(-reserve / 2)
	for _, row := range l.queue {
		l.release(row)
	}
	l.queue = nil
	l.log.Info("draining", "held", len(l.rows), "publishing", l.publishing, "deadline", l.s.DrainTimeout)
}

// advanceDrain starts the drain's phases 2 and 3 (startDrain) when due.
func (l *loop) advanceDrain(now time.Time) {
	if !l.draining {
		return
	}
	if !l.pubCutoff && !now.Before(l.pubDueAt) {
		l.cutOffPublishes()
	}
	if !l.failReleased && !now.Before(l.relDueAt) {
		l.releaseUnwrittenFailures()
	}
}

// cutOffPublishes releases the rows whose publish is still running at the
// publish deadline; their late results are ignored.
func (l *loop) cutOffPublishes() {
	l.pubCutoff = true
	l.cancelPub()
	var cut []*trackedRow
	for _, row := range l.rows {
		if row.state == rowPublishing {
			l.release(row)
			cut = append(cut, row)
		}
	}
	l.publishing = 0
	l.emit(EventDrainCutOff, rowIDs(cut), nil)
	if n := len(cut); n > 0 {
		l.log.Warn("publishes still running at the drain's publish deadline were cut off; releasing their rows", "rows", n)
	}
}

// releaseUnwrittenFailures releases, late in the drain, the rows whose
// publish failed but whose Fail has not landed (still waiting after a failed
// write, or in a write that has not returned): left to their lease, they
// would wait a whole Lease and count a lapsed claim; released, the next
// owner retries them at once. Whichever of the release and an in-flight
// Fail lands first wins; the other is fenced off by the lease token. Rows
// published but not completed are not released: that would make a possible
// duplicate a certain one.
func (l *loop) releaseUnwrittenFailures() {
	l.failReleased = true
	keep := l.resolved[:0]
	n := 0
	for _, row := range l.resolved {
		if !row.ok {
			l.release(row)
			n++
			continue
		}
		keep = append(keep, row)
	}
	l.resolved = keep
	for _, row := range l.rows {
		if !row.ok && row.state == rowWriting {
			l.release(row)
			n++
		}
	}
	if n > 0 {
		l.log.Warn("releasing failed rows whose outcome has not been written by the drain; the next owner retries them", "rows", n)
	}
}

// finished reports whether the drain is over (phase 4 of startDrain):
// nothing held and no store call the drain waits for in flight (every kind
// but the wake-up subscription, which ends with Run's context), or D
// reached.
func (l *loop) finished(now time.Time) bool {
	if !l.draining {
		return false
	}
	if !now.Before(l.drainAt) {
		return true
	}
	if len(l.rows) > 0 {
		return false
	}
	for _, c := range l.calls {
		if c.waitedForByDrain() {
			return false
		}
	}
	return true
}

// finish waits, until D at most, for the goroutines the loop started, and
// reports what was left behind.
func (l *loop) finish() {
	l.cancelPub()
	unwrittenOK, other := 0, 0
	left := make([]*trackedRow, 0, len(l.rows))
	for _, row := range l.rows {
		left = append(left, row)
		if row.ok && (row.state == rowResolved || row.state == rowWriting) {
			unwrittenOK++
		} else {
			other++
		}
	}
	l.emit(EventLeftToLease, rowIDs(left), nil)
	if unwrittenOK > 0 {
		l.log.Warn("published rows whose completion did not land by the drain deadline are left to their lease (a duplicate may follow)", "rows", unwrittenOK)
	}
	if other > 0 {
		l.log.Warn("rows still held at the drain deadline are left to their lease", "rows", other)
	}
	done := make(chan struct{})
	go func() {
		l.wg.Wait()
		close(done)
	}()
	wait := time.NewTimer(max(time.Until(l.drainAt), 0))
	defer wait.Stop()
	select {
	case <-done:
	case <-wait.C:
		l.log.Warn("a publisher or store call ignored its context and is still running after the drain deadline")
	}
}

func isPermanent(err error) bool { return reliar.IsPermanent(err) }
