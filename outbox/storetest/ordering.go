package storetest

import (
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

func orderingCases() []testCase {
	perKey := func(c outboxdriver.Capabilities) bool { return c.PerKeyOrdering }
	return []testCase{
		{name: "same-key rows are claimed one at a time in sequence order", needs: perKey, run: perKeyOneAtATime},
		{name: "a leased head blocks its key while others proceed", needs: perKey, run: perKeyLeasedHead},
		{name: "a head waiting for a retry blocks its key", needs: perKey, run: perKeyRetryHead},
		{name: "a dead head unblocks its key", needs: perKey, run: perKeyDeadHead},
		{name: "an expired head without a live lease does not block its key", needs: perKey, run: perKeyExpiredHead},
	}
}

// claimPerKey claims with per-key ordering as workerA.
func (f *fixture) claimPerKey() []outboxdriver.Record {
	f.t.Helper()
	return f.acquire(outboxdriver.AcquireRequest{BatchSize: 10, Ordering: outboxdriver.PerKey}).Records
}

// enqueueEach enqueues msgs one call each, so their sequences follow the
// order of msgs, and returns their ids.
func (f *fixture) enqueueEach(msgs ...reliar.Outgoing) []reliar.MessageID {
	f.t.Helper()
	for _, m := range msgs {
		f.enqueue(m)
	}
	return msgIDs(msgs)
}

// wantClaim claims per key and checks the claimed ids.
func (f *fixture) wantClaim(why string, want ...reliar.MessageID) []outboxdriver.Record {
	f.t.Helper()
	recs := f.claimPerKey()
	if !sameIDs(recordIDs(recs), want) {
		f.t.Fatalf("%s: per-key claim got %v, want %v", why, recordIDs(recs), want)
	}
	return recs
}

func perKeyOneAtATime(f *fixture) {
	ids := f.enqueueEach(keyed("k1"), keyed("k1"), keyed("k1"))
	for i, id := range ids {
		rec := f.wantClaim("head of k1", id)[0]
		if i > 0 && rec.Envelope.Sequence <= f.inspect(ids[i-1]).Sequence {
			f.t.Errorf("row %d claimed at sequence %d, not after its predecessor", i, rec.Envelope.Sequence)
		}
		f.wantClaim("k1's head is leased")
		f.affected("Complete", f.complete(rec.Lease()), 1)
	}
	f.wantClaim("k1 is drained")
}

func perKeyLeasedHead(f *fixture) {
	ids := f.enqueueEach(keyed("k1"), keyed("k1"), keyed("k2"), keyed("k2"), newMsg(1), newMsg(2))
	a1, a2, b1, _, n1, n2 := ids[0], ids[1], ids[2], ids[3], ids[4], ids[5]
	f.wantClaim("heads of k1 and k2 and the keyless rows", a1, b1, n1, n2)
	f.wantClaim("both heads are leased")
	if st := f.inspect(a2); st.ClaimCount != 0 {
		f.t.Errorf("k1's second row was claimed %d times behind a leased head", st.ClaimCount)
	}
	f.advance(lease + time.Minute)
	for _, r := range f.wantClaim("the heads' leases lapsed", a1, b1, n1, n2) {
		if !r.Reclaimed {
			f.t.Errorf("row %s: Reclaimed false, want a lapsed reclaim", r.Envelope.ID)
		}
	}
}

func perKeyRetryHead(f *fixture) {
	ids := f.enqueueEach(keyed("k1"), keyed("k1"), keyed("k2"))
	head, other := ids[0], ids[2]
	recs := f.wantClaim("heads", head, other)
	for _, r := range recs {
		if r.Envelope.ID == head {
			f.affected("Fail retry", f.fail(outboxdriver.FailedOutcome{Lease: r.Lease(), Error: "later", RetryAfter: 10 * time.Minute}), 1)
		} else {
			f.affected("Complete", f.complete(r.Lease()), 1)
		}
	}
	f.wantClaim("k1's head waits for its retry")
	f.advance(11 * time.Minute)
	rec := f.wantClaim("k1's head is due again", head)[0]
	f.affected("Release", f.release(rec.Lease()), 1)
	f.wantClaim("a released head comes back before later rows", head)
}

func perKeyDeadHead(f *fixture) {
	ids := f.enqueueEach(keyed("k1"), keyed("k1"))
	rec := f.wantClaim("head", ids[0])[0]
	f.affected("Fail dead", f.fail(outboxdriver.FailedOutcome{Lease: rec.Lease(), Error: "bad", DeadReason: outboxdriver.DeadPermanent}), 1)
	f.wantClaim("the dead head no longer blocks", ids[1])
}

// perKeyExpiredHead: a head row past expires_at can never be published; until
// the expiry sweep moves it to dead, it must not hold its key back, unless a
// live lease still holds it (its holder may yet publish it).
func perKeyExpiredHead(f *fixture) {
	now := f.now()
	head := expiring(now.Add(10 * time.Minute))
	head.OrderingKey = "k1"
	ids := f.enqueueEach(head, keyed("k1"), keyed("k1"))
	recs := f.acquire(outboxdriver.AcquireRequest{BatchSize: 10, Ordering: outboxdriver.PerKey, Lease: time.Hour}).Records
	if !sameIDs(recordIDs(recs), ids[:1]) {
		f.t.Fatalf("per-key claim got %v, want the head %s", recordIDs(recs), ids[0])
	}
	rec := recs[0]
	f.advance(11 * time.Minute)
	f.wantClaim("the expired head is still leased")
	f.affected("Release", f.release(rec.Lease()), 1)
	next := f.wantClaim("the expired head no longer blocks", ids[1])[0]
	f.affected("Complete", f.complete(next.Lease()), 1)
	f.wantClaim("the next row of the key", ids[2])
	if st := f.inspect(ids[0]); st.DeadAt != nil || st.PublishedAt != nil {
		f.t.Errorf("the expired head: dead_at %v published_at %v; want it left to the expiry sweep", deref(st.DeadAt), deref(st.PublishedAt))
	}
}
