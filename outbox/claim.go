package outbox

import (
	"context"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

type acquireResult struct {
	batch outboxdriver.AcquiredBatch
	err   error
	want  int
	probe bool
	after bool // the claim started after the previous full claim
}

func (r acquireResult) withErr(err error) acquireResult {
	return acquireResult{err: err, want: r.want}
}

// claimSize is how many rows a claim would ask for now; 0 means no claim.
//
// The MaxInFlight rule: the rows held (l.rows, in every rowState from
// queued to releasing), plus the rows the claim in flight asked for
// (asked), plus the rows producers reserved for a hand-off
// (handoffState.reserved) are at most MaxInFlight. A claim is how the loop
// adds rows, so the rule is kept here: one claim in flight at most, asking
// for no more than MaxInFlight - held - reserved. Producers keep it in
// handoffState.reserve, against held + asked as syncHandoff last published
// it (maybeClaim publishes the rows asked for before sending the claim; a
// reservation made between claimSize reading reserved and that publication
// is the one overshoot the rule allows). A row leaves the count when its
// outcome is written, its release returns or it is abandoned to its lease
// (drop), not when its publish ends. TestClaimSizeKeepsMaxInFlight and
// TestHandoffReserveKeepsMaxInFlight test it.
//
// The claim rule: claim only when the free room is at least half a claim
// (ceil(min(BatchSize, MaxInFlight)/2)), so a dispatcher never trickles
// one-row claims; ask for min(BatchSize, free). With the breaker open, a
// probe of one row is made when nothing else is held.
func (l *loop) claimSize() int {
	if l.draining || l.acq.running {
		return 0
	}
	if l.breaker.open {
		if len(l.rows) > 0 {
			return 0
		}
		return 1
	}
	free := l.s.MaxInFlight - len(l.rows) - int(l.ho.reserved.Load())
	half := (min(l.s.BatchSize, l.s.MaxInFlight) + 1) / 2
	if free < max(half, 1) {
		return 0
	}
	return min(l.s.BatchSize, free)
}

// claimDue is when the next claim is due, if one is to be made.
func (l *loop) claimDue() (time.Time, bool) { return l.nextClaim, l.claimSize() > 0 }

// asked is how many rows the claim in flight asked for; 0 when none is.
func (l *loop) asked() int {
	if !l.acq.running {
		return 0
	}
	return l.acq.held.want
}

func (l *loop) maybeClaim(now time.Time) {
	if at, ok := l.acq.due(); !ok || now.Before(at) {
		return
	}
	want := l.claimSize()
	probe := l.breaker.open
	// From here on the rows asked for count toward MaxInFlight, and
	// producers see them before the claim is sent.
	gen := l.acq.start(now, l.callTimeout(1), acquireResult{want: want})
	l.syncHandoff()
	l.woke = false
	req := outboxdriver.AcquireRequest{Worker: l.worker, BatchSize: want, Lease: l.s.Lease, Ordering: l.s.Ordering, MaxClaims: l.s.MaxClaims}
	l.fairRequest(&req)
	l.claimFrom(&req, probe, now)
	l.goStore(func(ctx context.Context) {
		ctx, span := l.d.tracer.StartClaim(ctx, l.worker, want)
		b, err := l.d.store.Acquire(ctx, req)
		span.End(err)
		l.acq.report(gen, acquireResult{batch: b, err: err, want: want, probe: probe, after: req.After != nil})
	})
}

// acquired applies the result of the claim in flight.
func (l *loop) acquired(r acquireResult, now time.Time) {
	if r.err != nil {
		if isPermanent(r.err) {
			l.fail(r.err, now)
			return
		}
		l.log.Error("claim failed; backing off", "error", r.err, "backoff", l.s.IdlePollInterval)
		l.nextClaim = now.Add(l.s.IdlePollInterval)
		return
	}
	b := r.batch
	for _, p := range b.Poisoned {
		l.log.Warn("undecodable row moved to dead", "id", p.ID, "sequence", p.Sequence, "error", p.Error)
	}
	if n := len(b.Poisoned); n > 0 {
		l.d.metrics.Dead(DeadUndecodable, n)
	}
	for _, id := range b.DeadMaxClaims {
		l.log.Warn("row reclaimed too often after lapsed leases; moved to dead", "id", id, "reason", DeadMaxClaims)
	}
	if n := len(b.DeadMaxClaims); n > 0 {
		l.d.metrics.Dead(DeadMaxClaims, n)
	}
	if l.s.Fairness == FairnessTenant {
		interleaveTenants(b.Records)
	}
	l.take(b.Records, r.probe, now)
	l.noteFairClaim(&b, r.want)
	l.noteClaimEnd(&b, r)
	switch n := b.Len(); {
	case r.after && n < r.want:
		// The rows after the last full claim ran out: look from the
		// head at once for rows that became due behind it.
		l.nextClaim = now
	case r.probe || n == 0:
		l.nextClaim = now.Add(l.s.IdlePollInterval)
	case n >= r.want || b.More:
		l.nextClaim = now // full: claim again at once
	default:
		l.nextClaim = now.Add(l.s.PollInterval)
	}
	if l.woke && !l.breaker.open {
		l.nextClaim = now
	}
}

// claimFrom sets where the claim starts. Right after a full claim, on a
// store with the ClaimAfter capability, it starts after that claim's last
// row: the rows that claim leased stay in the store's pending index until
// their outcome is written, and a scan from the head would step over each of
// them again. Every PollInterval, and after a claim from a position that
// came back short, the claim starts from the head instead, so that a row
// that became due behind the position (released, lapsed, retried or
// committed late) waits at most about one PollInterval longer than it would
// have.
func (l *loop) claimFrom(req *outboxdriver.AcquireRequest, probe bool, now time.Time) {
	if l.claimAfter == nil || probe || req.Fairness != outboxdriver.FairnessUnordered ||
		!l.d.store.Capabilities().ClaimAfter || now.Sub(l.headClaimAt) >= l.s.PollInterval {
		l.headClaimAt = now
		return
	}
	after := *l.claimAfter
	req.After = &after
}

// noteClaimEnd keeps the position of the last row of a full claim, from
// which the next claim may start; any other outcome sends the next claim to
// the head.
func (l *loop) noteClaimEnd(b *outboxdriver.AcquiredBatch, r acquireResult) {
	l.claimAfter = nil
	if r.probe || b.Len() < r.want || len(b.Records) == 0 {
		return
	}
	last := b.Records[0].Position()
	for i := range b.Records[1:] {
		if p := b.Records[i+1].Position(); last.Before(p) {
			last = p
		}
	}
	l.claimAfter = &last
}

// take holds rows a claim returned or the store handed over: it reports
// them (claimed, or reclaimed after a lapsed lease), and queues them for
// publishing, or releases them when the dispatcher is draining.
func (l *loop) take(recs []outboxdriver.Record, probe bool, now time.Time) {
	l.d.updateHealth(func(h *Health) { h.LastClaim = now })
	l.d.metrics.Claimed(len(recs))
	if l.emitted() {
		var fresh []reliar.MessageID
		for i := range recs {
			rec := &recs[i]
			if rec.Reclaimed {
				l.d.events.Event(Event{Kind: EventReclaimed, Worker: l.worker, At: now, IDs: []reliar.MessageID{rec.Envelope.ID}, Count: 1, PrevClaimedAt: rec.PrevClaimedAt})
			} else {
				fresh = append(fresh, rec.Envelope.ID)
			}
		}
		l.emit(EventClaimed, fresh, nil)
	}
	tracked := make([]trackedRow, len(recs)) // one allocation per claim
	for i := range recs {
		row := &tracked[i]
		row.rec, row.probe = recs[i], probe
		l.hold(row)
		if row.rec.Reclaimed {
			l.onReclaimed(&row.rec, now)
		}
		if l.draining {
			l.release(row) // claimed while cancelling: never started
			continue
		}
		row.state = rowQueued
		l.queue = append(l.queue, row)
	}
}

// onWake ends the current wait: a claim follows at once, or right after the
// claim in flight.
func (l *loop) onWake(now time.Time) {
	if l.breaker.open {
		return // probes keep their own pace
	}
	if l.acq.running {
		l.woke = true
		return
	}
	l.nextClaim = now
}

// onReclaimed notes a lapsed reclaim, and counts it when its previous claim
// is older than the broker's dedup window: a duplicate the broker will not
// drop, if the previous holder had published.
func (l *loop) onReclaimed(rec *outboxdriver.Record, now time.Time) {
	id := rec.Envelope.ID
	dw, ok := l.d.pub.(reliar.DedupWindower)
	if !ok || rec.PrevClaimedAt == nil {
		l.log.Info("reclaimed a row whose lease lapsed", "id", id, "lapsed_claims", rec.LapsedClaims)
		return
	}
	window := dw.DedupWindow()
	if age := now.Sub(*rec.PrevClaimedAt); age > window {
		l.log.Warn("republishing a row whose previous claim is older than the broker's dedup window; a duplicate will reach consumers if it was published before", "id", id, "previous_claim_age", age, "dedup_window", window)
		l.d.metrics.RedeliveryOutsideDedup(1)
		return
	}
	l.log.Info("reclaimed a row whose lease lapsed, within the broker's dedup window", "id", id, "lapsed_claims", rec.LapsedClaims)
}
