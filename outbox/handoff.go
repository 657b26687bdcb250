package outbox

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/reliar/reliar/outbox/outboxdriver"
)

// The zero-claim path: a store that is an outboxdriver.Handoffer, and was
// configured to use it (Capabilities.Handoff), leases rows at enqueue to this
// dispatcher and hands them over once their commit is proven. The
// subscription lives as long as the wake-up subscription (the store proves
// commits with notifications). Rows waiting for their hand-off are reserved
// against MaxInFlight from the producer's side (for at most
// outboxdriver.HandoffReserveFor: a rolled-back transaction never proves
// its commit); once handed over they are held like claimed rows:
// published, renewed, written, released at the drain.

// handoffState is what producers' goroutines share with the loop.
type handoffState struct {
	max      int64
	held     atomic.Int64 // rows held plus rows asked by the claim in flight
	reserved atomic.Int64 // rows leased at enqueue, not yet handed over
	closed   atomic.Bool  // draining, or the breaker is open: lease nothing
}

// reserve makes room for n rows if MaxInFlight allows: held (rows held and
// asked for, as the loop last published them) plus reserved plus n must
// stay within max. It is the producers' half of the MaxInFlight rule
// (claimSize).
func (h *handoffState) reserve(n int) bool {
	for {
		if h.closed.Load() {
			return false
		}
		r := h.reserved.Load()
		if h.held.Load()+r+int64(n) > h.max {
			return false
		}
		if h.reserved.CompareAndSwap(r, r+int64(n)) {
			return true
		}
	}
}

func (h *handoffState) unreserve(n int) { h.reserved.Add(-int64(n)) }

// syncHandoff publishes the loop's count of rows held and asked for, and
// whether leasing at enqueue is open.
func (l *loop) syncHandoff() {
	l.ho.held.Store(int64(len(l.rows) + l.asked()))
	l.ho.closed.Store(l.draining || l.breaker.open)
}

// subscribeHandoff subscribes to hand-offs for ctx's life (the wake-up
// subscription's) when the store offers them.
func (l *loop) subscribeHandoff(ctx context.Context) {
	// Fair claims share every claim among tenants; rows handed over at
	// commit would skip that.
	if l.handoffCh != nil || !l.d.store.Capabilities().Handoff || l.s.Fairness == FairnessTenant {
		return
	}
	h, ok := l.d.store.(outboxdriver.Handoffer)
	if !ok {
		return
	}
	l.syncHandoff()
	ch, err := h.Handoff(ctx, outboxdriver.HandoffRequest{
		Worker:    l.worker,
		Lease:     l.s.Lease,
		MinLeft:   l.s.PublishTimeout,
		Tenants:   l.s.MaxInFlightPerTenant == 0,
		MaxRows:   l.s.MaxInFlight,
		Reserve:   l.ho.reserve,
		Unreserve: l.ho.unreserve,
	})
	switch {
	case errors.Is(err, outboxdriver.ErrHandoffTaken):
		l.log.Debug("another dispatcher takes the store's hand-offs; claiming every row")
		return
	case err != nil:
		l.log.Warn("store hand-offs unavailable; claiming every row", "error", err)
		return
	}
	l.handoffCh = ch
}

// onHandoff holds rows handed over by the store as if claimed.
func (l *loop) onHandoff(h outboxdriver.HandedOver, now time.Time) {
	recs := h.Records
	defer l.ho.unreserve(h.Reserved)
	if len(recs) == 0 {
		return
	}
	l.take(recs, false, now)
	l.syncHandoff()
}

// endHandoff waits, once the loop is done, for the store to close the
// hand-off channel (the subscription's context is cancelled by then). Rows
// still arriving are left to their lease.
func (l *loop) endHandoff() {
	if l.handoffCh == nil {
		return
	}
	for range l.handoffCh {
	}
	l.handoffCh = nil
}
