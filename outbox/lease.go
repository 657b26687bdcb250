package outbox

import (
	"context"
	"time"

	"github.com/reliar/reliar/outbox/outboxdriver"
)

type renewResult struct {
	want     int
	affected int64
	err      error
}

func (r renewResult) withErr(err error) renewResult { return renewResult{want: r.want, err: err} }

type releaseResult struct {
	leases   []outboxdriver.Lease
	affected int64
	err      error
	atDrain  bool
}

func (r releaseResult) withErr(err error) releaseResult {
	return releaseResult{leases: r.leases, err: err}
}

type statsResult struct {
	stats Stats
	err   error
}

func (r statsResult) withErr(err error) statsResult { return statsResult{err: err} }

// renewDue is when the next renewal is due, if rows are held.
func (l *loop) renewDue() (time.Time, bool) { return l.nextRenew, len(l.rows) > 0 }

// statsDue is when the next stats call is due, if one is to be made.
func (l *loop) statsDue() (time.Time, bool) {
	return l.nextStats, l.s.StatsInterval > 0 && !l.draining
}

// maybeRenew extends the leases of every row held, every Lease/2. The
// renewal runs beside any outcome write, so it lands within StoreTimeout of
// its tick even while a write hangs.
func (l *loop) maybeRenew(now time.Time) {
	if len(l.rows) == 0 {
		l.nextRenew = now.Add(l.renewEvery)
		return
	}
	if at, ok := l.renew.due(); !ok || now.Before(at) || (l.draining && !now.Before(l.drainAt)) {
		return
	}
	l.nextRenew = now.Add(l.renewEvery)
	leases := make([]outboxdriver.Lease, 0, len(l.rows))
	for lease := range l.rows {
		leases = append(leases, lease)
	}
	d := l.s.Lease
	l.renew.launch(now, renewResult{want: len(leases)}, func(ctx context.Context) renewResult {
		n, err := l.d.store.ExtendLease(ctx, leases, d)
		return renewResult{want: len(leases), affected: n, err: err}
	})
}

// renewed applies the result of the renewal in flight.
func (l *loop) renewed(r renewResult, _ time.Time) {
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
	if l.rel.running || len(l.toRelease) == 0 {
		return
	}
	leases := make([]outboxdriver.Lease, len(l.toRelease))
	for i, row := range l.toRelease {
		leases[i] = row.rec.Lease()
	}
	l.emit(EventReleased, idsOf(leases), nil)
	l.toRelease = nil
	atDrain := l.draining
	l.rel.launch(now, releaseResult{leases: leases, atDrain: atDrain}, func(ctx context.Context) releaseResult {
		n, err := l.d.store.Release(ctx, leases)
		return releaseResult{leases: leases, affected: n, err: err, atDrain: atDrain}
	})
}

// released applies the result of the release in flight.
func (l *loop) released(r releaseResult, _ time.Time) {
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
	if at, ok := l.stats.due(); !ok || now.Before(at) {
		return
	}
	l.nextStats = now.Add(l.s.StatsInterval)
	l.stats.launch(now, statsResult{}, func(ctx context.Context) statsResult {
		s, err := l.d.store.Stats(ctx)
		return statsResult{stats: s, err: err}
	})
}

// statted applies the result of the stats call in flight.
func (l *loop) statted(r statsResult, _ time.Time) {
	if r.err != nil {
		l.log.Warn("stats failed", "error", r.err)
		return
	}
	l.d.metrics.Stats(r.stats)
}
