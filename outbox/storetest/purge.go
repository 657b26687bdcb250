package storetest

import (
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

func purgeCases() []testCase {
	return []testCase{
		{name: "expired pending rows go dead, leased ones wait", run: purgeExpiry},
		{name: "expiry sweep is capped at BatchSize", run: purgeExpiryBounded},
		{name: "published rows past retention are deleted in bounded passes", run: purgePublished},
		{name: "dead rows past retention are deleted in bounded passes", run: purgeDead},
		{name: "nil retention skips", run: purgeNilRetention},
	}
}

// retention is the retention the purge cases use; rows are aged past it.
const retention = time.Hour

func purgeExpiry(f *fixture) {
	now := f.now()
	held := expiring(now.Add(time.Hour))
	held.AvailableAt = now.Add(-time.Minute) // first in claim order
	free := expiring(now.Add(time.Hour))
	keep := newMsg(3)
	f.enqueue(held, free, keep)
	if rec := f.claimOne(workerA, 3*time.Hour); rec.Envelope.ID != held.ID {
		f.t.Fatalf("claimed %s, want %s", rec.Envelope.ID, held.ID)
	}
	f.advance(2 * time.Hour)
	if rep := f.purge(outboxdriver.PurgeRequest{BatchSize: 10}); rep.Expired != 1 || rep.PublishedDeleted != 0 || rep.DeadDeleted != 0 {
		f.t.Fatalf("Purge = %+v, want only the free expired row expired", rep)
	}
	st := f.inspect(free.ID)
	if deref(st.DeadReason) != string(outboxdriver.DeadExpired) || st.DeadAt == nil || st.Attempts != 0 {
		f.t.Errorf("free expired row: dead_reason %v dead_at %v attempts %d; want expired, set, 0", deref(st.DeadReason), deref(st.DeadAt), st.Attempts)
	}
	f.leaseCleared(free.ID, st)
	if st := f.inspect(held.ID); st.DeadAt != nil || deref(st.LockedBy) != workerA {
		f.t.Errorf("leased expired row: dead_at %v locked_by %v; want it untouched while leased", deref(st.DeadAt), deref(st.LockedBy))
	}
	if st := f.inspect(keep.ID); st.DeadAt != nil {
		f.t.Errorf("row without expiry went dead: %v", deref(st.DeadReason))
	}
	// Once the lease lapses, the sweep takes the held row too.
	f.advance(2 * time.Hour)
	if rep := f.purge(outboxdriver.PurgeRequest{BatchSize: 10}); rep.Expired != 1 {
		f.t.Fatalf("Purge after the lease lapsed = %+v, want 1 expired", rep)
	}
	st = f.inspect(held.ID)
	if deref(st.DeadReason) != string(outboxdriver.DeadExpired) {
		f.t.Errorf("held row after its lease lapsed: dead_reason %v, want expired", deref(st.DeadReason))
	}
	f.leaseCleared(held.ID, st)
}

func purgeExpiryBounded(f *fixture) {
	past := f.now().Add(-time.Minute)
	msgs := make([]reliar.Outgoing, 25)
	for i := range msgs {
		msgs[i] = expiring(past)
	}
	f.enqueue(msgs...)
	for pass, want := range []int64{10, 10, 5, 0} {
		if rep := f.purge(outboxdriver.PurgeRequest{BatchSize: 10}); rep.Expired != want {
			f.t.Fatalf("pass %d: Expired %d, want %d", pass+1, rep.Expired, want)
		}
	}
	if st := f.stats(); st.Dead != 25 || st.Pending != 0 {
		f.t.Errorf("Stats: Dead %d Pending %d; want 25 0", st.Dead, st.Pending)
	}
}

// survivors makes rows that purges must never touch, however old: a leased
// row and a pending row scheduled far ahead. No other row may be due.
func (f *fixture) survivors() []reliar.MessageID {
	f.t.Helper()
	held, waiting := newMsg(0), at(f.now().Add(1000*time.Hour))
	f.enqueue(held, waiting)
	if rec := f.claimOne(workerA, 24*time.Hour); rec.Envelope.ID != held.ID {
		f.t.Fatalf("claimed %s, want %s", rec.Envelope.ID, held.ID)
	}
	return []reliar.MessageID{held.ID, waiting.ID}
}

// survived checks the rows survivors made: both pending, the first leased.
func (f *fixture) survived(ids []reliar.MessageID) {
	f.t.Helper()
	for i, id := range ids {
		st := f.inspect(id)
		if st.PublishedAt != nil || st.DeadAt != nil || (i == 0) != (st.LockedBy != nil) {
			f.t.Errorf("row %s: published_at %v dead_at %v locked_by %v; want it untouched by the purge",
				id, deref(st.PublishedAt), deref(st.DeadAt), deref(st.LockedBy))
		}
	}
}

// bounded runs purge passes of BatchSize 10 and checks each pass's count.
func (f *fixture) bounded(req outboxdriver.PurgeRequest, count func(outboxdriver.PurgeReport) int64, other func(outboxdriver.PurgeReport) int64) {
	f.t.Helper()
	req.BatchSize = 10
	for pass, want := range []int64{10, 10, 5, 0} {
		rep := f.purge(req)
		if count(rep) != want || other(rep) != 0 || rep.Expired != 0 {
			f.t.Fatalf("pass %d: %+v, want %d deleted of one kind only", pass+1, rep, want)
		}
	}
}

func publishedDeleted(r outboxdriver.PurgeReport) int64 { return r.PublishedDeleted }
func deadDeleted(r outboxdriver.PurgeReport) int64      { return r.DeadDeleted }

func purgePublished(f *fixture) {
	keep := f.survivors()
	old := f.enqueueN(25)
	f.affected("Complete", f.complete(leases(f.claim(25))...), 25)
	oldDead := f.kill(outboxdriver.DeadPermanent, newMsg(1))
	f.advance(2 * retention)
	fresh := f.enqueueN(3)
	f.affected("Complete", f.complete(leases(f.claim(3))...), 3)

	f.bounded(outboxdriver.PurgeRequest{PublishedRetention: ptr(retention)}, publishedDeleted, deadDeleted)
	for _, id := range old {
		f.gone(id)
	}
	for _, id := range append(fresh, oldDead...) {
		f.inspect(id)
	}
	f.survived(keep)
}

func purgeDead(f *fixture) {
	msgs := make([]reliar.Outgoing, 25)
	for i := range msgs {
		msgs[i] = newMsg(i)
	}
	keep := f.survivors()
	old := f.kill(outboxdriver.DeadMaxAttempts, msgs...)
	oldPublished := f.enqueueN(1)
	f.affected("Complete", f.complete(leases(f.claim(1))...), 1)
	f.advance(2 * retention)
	fresh := f.kill(outboxdriver.DeadPermanent, newMsg(1), newMsg(2))

	f.bounded(outboxdriver.PurgeRequest{DeadRetention: ptr(retention)}, deadDeleted, publishedDeleted)
	for _, id := range old {
		f.gone(id)
	}
	for _, id := range append(fresh, oldPublished...) {
		f.inspect(id)
	}
	f.survived(keep)
}

func purgeNilRetention(f *fixture) {
	published := f.enqueueN(1)
	f.affected("Complete", f.complete(leases(f.claim(1))...), 1)
	dead := f.kill(outboxdriver.DeadPermanent, newMsg(1))
	f.advance(100 * 24 * time.Hour)
	if rep := f.purge(outboxdriver.PurgeRequest{BatchSize: 10}); rep != (outboxdriver.PurgeReport{}) {
		f.t.Fatalf("Purge with nil retentions = %+v, want nothing done", rep)
	}
	f.inspect(published[0])
	f.inspect(dead[0])
	if rep := f.purge(outboxdriver.PurgeRequest{BatchSize: 10, PublishedRetention: ptr(retention), DeadRetention: ptr(retention)}); rep.PublishedDeleted != 1 || rep.DeadDeleted != 1 {
		f.t.Fatalf("Purge with both retentions = %+v, want one of each deleted", rep)
	}
}
