package storetest

import (
	"time"

	"github.com/reliar/reliar/outbox/outboxdriver"
)

func statsCases() []testCase {
	return []testCase{
		{name: "an empty store counts nothing", run: statsEmpty},
		{name: "pending rows are partitioned by state", run: statsPartition},
	}
}

func statsEmpty(f *fixture) {
	st := f.stats()
	if st.AsOf.IsZero() {
		f.t.Error("AsOf is zero, want the store's clock")
	}
	st.AsOf = time.Time{}
	if st != (outboxdriver.Stats{}) {
		f.t.Errorf("Stats of an empty store = %+v, want all zero", st)
	}
}

// wantStats is the expected partition.
type wantStats struct {
	due, leased, scheduled, expired, dead int64
}

func (f *fixture) checkStats(when string, want wantStats) {
	f.t.Helper()
	st := f.stats()
	got := wantStats{st.Due, st.Leased, st.Scheduled, st.ExpiredPending, st.Dead}
	if got != want {
		f.t.Errorf("%s: Due %d Leased %d Scheduled %d ExpiredPending %d Dead %d; want %d %d %d %d %d", when,
			st.Due, st.Leased, st.Scheduled, st.ExpiredPending, st.Dead, want.due, want.leased, want.scheduled, want.expired, want.dead)
	}
	if sum := st.Due + st.Leased + st.Scheduled + st.ExpiredPending; st.Pending != sum {
		f.t.Errorf("%s: Pending %d, want the sum of the four partitions %d", when, st.Pending, sum)
	}
	if st.AsOf.IsZero() {
		f.t.Errorf("%s: AsOf is zero", when)
	}
}

func statsPartition(f *fixture) {
	now := f.now()
	pub, dead, held, heldExpiring := newMsg(1), newMsg(2), newMsg(3), expiring(now.Add(5*time.Minute))
	f.enqueue(pub, dead, held, heldExpiring)
	for _, r := range f.acquire(outboxdriver.AcquireRequest{BatchSize: 4, Lease: time.Hour}).Records {
		switch r.Envelope.ID {
		case pub.ID:
			f.affected("Complete", f.complete(r.Lease()), 1)
		case dead.ID:
			f.affected("Fail dead", f.fail(outboxdriver.FailedOutcome{Lease: r.Lease(), Error: "x", DeadReason: outboxdriver.DeadPermanent}), 1)
		}
	}
	f.enqueue(newMsg(4), newMsg(5), at(now.Add(2*time.Hour)), expiring(now.Add(5*time.Minute)))

	f.checkStats("fresh rows", wantStats{due: 3, leased: 2, scheduled: 1, dead: 1})
	if age := f.stats().OldestDueAge; age < 0 || age > slack {
		f.t.Errorf("fresh rows: OldestDueAge %v, want about 0", age)
	}

	f.advance(10 * time.Minute)
	// An expired row under a live lease counts as leased.
	f.checkStats("after 10m", wantStats{due: 2, leased: 2, scheduled: 1, expired: 1, dead: 1})
	f.nearDuration("after 10m: OldestDueAge", f.stats().OldestDueAge, 10*time.Minute)

	f.advance(2 * time.Hour)
	// The leases lapsed: the held rows are due (or expired), the scheduled
	// row is due, and the oldest due row is the first held one.
	f.checkStats("after 2h10m", wantStats{due: 4, expired: 2, dead: 1})
	f.nearDuration("after 2h10m: OldestDueAge", f.stats().OldestDueAge, 2*time.Hour+10*time.Minute)

	f.claim(100)
	f.checkStats("everything due claimed", wantStats{leased: 4, expired: 2, dead: 1})
	if age := f.stats().OldestDueAge; age != 0 {
		f.t.Errorf("nothing due: OldestDueAge %v, want 0", age)
	}
}
