package outbox

import (
	"context"
	"time"

	"github.com/reliar/reliar/outbox/outboxdriver"
)

type renewResult struct {
	gen      uint64
	want     int
	affected int64
	err      error
}

type releaseResult struct {
	gen      uint64
	leases   []outboxdriver.Lease
	affected int64
	err      error
	atDrain  bool
}

type statsResult struct {
	gen   uint64
	stats Stats
	err   error
}

// maybeRenew extends the leases of every row held, every Lease/2. The
// renewal runs beside any outcome write, so it lands within StoreTimeout of
// its tick even while a write hangs.
func (l *loop) maybeRenew(now time.Time) {
	if len(l.rows) == 0 {
		l.nextRenew = now.Add(l.renewEvery)
		return
	}
	if l.renewing || now.Before(l.nextRenew) || (l.draining && !now.Before(l.drainAt)) {
		return
	}
	l.nextRenew = now.Add(l.renewEvery)
	leases := make([]outboxdriver.Lease, 0, len(l.rows))
	for lease := range l.rows {
		leases = append(leases, lease)
	}
	l.renewing = true
	d := l.s.Lease
	gen := l.renew.start(now, l.callTimeout(1))
	l.goStore(func(ctx context.Context) {
		n, err := l.d.store.ExtendLease(ctx, leases, d)
		deliver(l, l.renewCh, renewResult{gen: gen, want: len(leases), affected: n, err: err})
	})
}

func (l *loop) onRenewed(r renewResult) {
	if !l.renew.finish(r.gen) {
		l.lateResult(l.renew.name)
		return
	}
	l.renewed(r)
}

// renewed applies the result of the renewal in flight.
func (l *loop) renewed(r renewResult) {
	l.renewing = false
	if r.err != nil {
		l.log.Warn("lease renewal failed", "rows", r.want, "error", r.err)
		return
	}
	if short := int64(r.want) - r.affected; short > 0 {
		// Rows whose outcome landed meanwhile, or that another worker
		// reclaimed after a lapse: their writes are fenced either way.
		l.log.Debug("lease renewal extended fewer rows than held", "held", r.want, "extended", r.affected)
		l.d.metrics.LeaseShortfall(int(short))
		if l.emitted() {
			l.d.events.Event(Event{Kind: EventLeaseShortfall, Worker: l.worker, At: time.Now(), Count: int(short)})
		}
	}
}

// release queues row for a Release call: its lease is cleared without
// recording an attempt.
func (l *loop) release(row *trackedRow) {
	row.state = rowReleasing
	l.toRelease = append(l.toRelease, row)
}

func (l *loop) maybeRelease(now time.Time) {
	if l.releasing || len(l.toRelease) == 0 {
		return
	}
	leases := make([]outboxdriver.Lease, len(l.toRelease))
	for i, row := range l.toRelease {
		leases[i] = row.rec.Lease()
	}
	l.emit(EventReleased, idsOf(leases), nil)
	l.toRelease = nil
	l.releasing = true
	l.releasingLeases = leases
	atDrain := l.draining
	gen := l.rel.start(now, l.callTimeout(1))
	l.goStore(func(ctx context.Context) {
		n, err := l.d.store.Release(ctx, leases)
		deliver(l, l.releaseCh, releaseResult{gen: gen, leases: leases, affected: n, err: err, atDrain: atDrain})
	})
}

func (l *loop) onReleased(r releaseResult) {
	if !l.rel.finish(r.gen) {
		l.lateResult(l.rel.name)
		return
	}
	l.released(r)
}

// released applies the result of the release in flight.
func (l *loop) released(r releaseResult) {
	l.releasing = false
	l.releasingLeases = nil
	for _, lease := range r.leases {
		if row := l.rows[lease]; row != nil && row.state == rowReleasing {
			l.drop(lease)
		}
	}
	if r.err != nil {
		l.log.Warn("release failed; the leases will lapse on their own", "rows", len(r.leases), "error", r.err)
		return
	}
	if r.atDrain {
		l.d.metrics.ReleasedAtDrain(len(r.leases))
	}
}

func (l *loop) maybeStats(now time.Time) {
	if l.s.StatsInterval <= 0 || l.statting || l.draining || now.Before(l.nextStats) {
		return
	}
	l.nextStats = now.Add(l.s.StatsInterval)
	l.statting = true
	gen := l.stats.start(now, l.callTimeout(1))
	l.goStore(func(ctx context.Context) {
		s, err := l.d.store.Stats(ctx)
		deliver(l, l.statsCh, statsResult{gen: gen, stats: s, err: err})
	})
}

func (l *loop) onStats(r statsResult) {
	if !l.stats.finish(r.gen) {
		l.lateResult(l.stats.name)
		return
	}
	l.statted(r)
}

// statted applies the result of the stats call in flight.
func (l *loop) statted(r statsResult) {
	l.statting = false
	if r.err != nil {
		l.log.Warn("stats failed", "error", r.err)
		return
	}
	l.d.metrics.Stats(r.stats)
}
