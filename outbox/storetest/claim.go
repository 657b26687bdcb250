package storetest

import (
	"cmp"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

func claimCases() []testCase {
	return []testCase{
		{name: "claims in available_at then sequence order", run: claimOrder},
		{name: "honours BatchSize", run: claimBatchSize},
		{name: "scheduled rows wait until due", run: claimScheduled},
		{name: "leased rows are not claimable", run: claimLeased},
		{name: "expired rows are never claimed", run: claimExpired},
		{name: "a claim sets the lease and counts the claim", run: claimSetsLease},
		{name: "fresh lease token per row and per claim", run: claimFreshTokens},
		{name: "claims leave attempts alone", run: claimKeepsAttempts},
		{name: "concurrent claimers never share a row", run: claimConcurrent},
	}
}

func claimOrder(f *fixture) {
	now := f.now()
	// Two rows share an available_at, so their sequences break the tie.
	msgs := []reliar.Outgoing{
		at(now.Add(-3 * time.Minute)),
		at(now.Add(-1 * time.Minute)),
		at(now.Add(-2 * time.Minute)),
		at(now.Add(-2 * time.Minute)),
		newMsg(4),
		at(now.Add(time.Hour)),
	}
	for _, m := range msgs {
		f.enqueue(m)
	}
	type key struct {
		id  reliar.MessageID
		at  time.Time
		seq int64
	}
	var due []key
	for _, m := range msgs[:5] {
		st := f.inspect(m.ID)
		due = append(due, key{m.ID, st.AvailableAt, st.Sequence})
	}
	slices.SortFunc(due, func(a, b key) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return cmp.Compare(a.seq, b.seq)
	})
	want := make([]reliar.MessageID, len(due))
	for i, k := range due {
		want[i] = k.id
	}
	for _, step := range []struct{ batch, from, to int }{{2, 0, 2}, {2, 2, 4}, {10, 4, 5}} {
		recs := f.claim(step.batch)
		if got := recordIDs(recs); !sameIDs(got, want[step.from:step.to]) {
			f.t.Fatalf("claim of %d: got %v, want rows %d..%d of the (available_at, sequence) order %v",
				step.batch, got, step.from, step.to-1, want)
		}
		for _, r := range recs {
			if st := f.inspect(r.Envelope.ID); !r.AvailableAt.Equal(st.AvailableAt) {
				f.t.Errorf("record %s: AvailableAt %v, stored available_at %v", r.Envelope.ID, r.AvailableAt, st.AvailableAt)
			}
		}
	}
	f.claimNone("only the scheduled row is left")
}

func claimBatchSize(f *fixture) {
	f.enqueueN(7)
	for _, want := range []int{3, 3, 1, 0} {
		if got := len(f.claim(3)); got != want {
			f.t.Fatalf("claim of 3 from the rest: got %d records, want %d", got, want)
		}
	}
}

func claimScheduled(f *fixture) {
	id := f.enqueue(at(f.now().Add(time.Hour)))[0]
	f.claimNone("row due in an hour")
	if st := f.stats(); st.Scheduled != 1 || st.Due != 0 {
		f.t.Errorf("Stats: Scheduled %d, Due %d; want 1, 0", st.Scheduled, st.Due)
	}
	f.advance(59 * time.Minute)
	f.claimNone("row due in a minute")
	f.advance(2 * time.Minute)
	if rec := f.claimOne(workerA, lease); rec.Envelope.ID != id {
		f.t.Fatalf("claimed %s, want the scheduled row %s", rec.Envelope.ID, id)
	}
}

func claimLeased(f *fixture) {
	f.enqueueN(2)
	if got := len(f.claim(10)); got != 2 {
		f.t.Fatalf("first claim: got %d records, want 2", got)
	}
	f.claimNone("both rows are leased")
	f.advance(lease / 2)
	f.claimNone("both leases still run")
}

func claimExpired(f *fixture) {
	now := f.now()
	gone := expiring(now.Add(-time.Minute))
	later := expiring(now.Add(time.Hour))
	never := newMsg(3)
	f.enqueue(gone, later, never)
	recs := f.claim(10)
	if want := []reliar.MessageID{later.ID, never.ID}; !sameIDs(recordIDs(recs), want) {
		f.t.Fatalf("claim: got %v, want the unexpired rows %v", recordIDs(recs), want)
	}
	f.affected("Release", f.release(leases(recs)...), 2)
	f.advance(2 * time.Hour)
	recs = f.claim(10)
	if want := []reliar.MessageID{never.ID}; !sameIDs(recordIDs(recs), want) {
		f.t.Fatalf("claim after the second row expired: got %v, want %v", recordIDs(recs), want)
	}
}

func claimSetsLease(f *fixture) {
	id := f.enqueueN(1)[0]
	before := f.now()
	rec := f.claimOne(workerA, 2*time.Minute)
	after := f.now()
	st := f.inspect(id)

	if rec.Envelope.ID != id || rec.Token == uuid.Nil {
		f.t.Fatalf("record: id %s token %s, want id %s and a token", rec.Envelope.ID, rec.Token, id)
	}
	if rec.Attempts != 0 || rec.ClaimCount != 1 || rec.LapsedClaims != 0 || rec.Reclaimed || rec.PrevClaimedAt != nil {
		f.t.Errorf("record: Attempts %d ClaimCount %d LapsedClaims %d Reclaimed %v PrevClaimedAt %v; want 0 1 0 false nil",
			rec.Attempts, rec.ClaimCount, rec.LapsedClaims, rec.Reclaimed, rec.PrevClaimedAt)
	}
	if rec.Envelope.Attempt != 1 || rec.Envelope.Sequence != st.Sequence {
		f.t.Errorf("envelope: Attempt %d Sequence %d; want 1 and the stored sequence %d", rec.Envelope.Attempt, rec.Envelope.Sequence, st.Sequence)
	}
	if st.LockedBy == nil || *st.LockedBy != workerA {
		f.t.Errorf("locked_by = %v, want %q", deref(st.LockedBy), workerA)
	}
	if st.LeaseToken == nil || *st.LeaseToken != rec.Token {
		f.t.Errorf("lease_token = %v, want the record's token %s", deref(st.LeaseToken), rec.Token)
	}
	f.near("locked_until", st.LockedUntil, before.Add(2*time.Minute), after.Add(2*time.Minute))
	f.near("last_claimed_at", st.LastClaimedAt, before, after)
	if st.ClaimCount != 1 || st.Attempts != 0 || st.LapsedClaims != 0 {
		f.t.Errorf("claim_count %d attempts %d lapsed_claims %d; want 1 0 0", st.ClaimCount, st.Attempts, st.LapsedClaims)
	}
}

func claimFreshTokens(f *fixture) {
	f.enqueueN(5)
	seen := make(map[uuid.UUID]bool)
	for round := range 2 {
		recs := f.claim(10)
		if len(recs) != 5 {
			f.t.Fatalf("round %d: claimed %d rows, want 5", round, len(recs))
		}
		for _, r := range recs {
			if r.Token == uuid.Nil || seen[r.Token] {
				f.t.Fatalf("round %d: row %s got token %s, already given out or nil", round, r.Envelope.ID, r.Token)
			}
			seen[r.Token] = true
		}
		f.affected("Release", f.release(leases(recs)...), 5)
	}
}

func claimKeepsAttempts(f *fixture) {
	id := f.enqueueN(1)[0]
	rec := f.claimOne(workerA, lease)
	f.affected("Fail retry", f.fail(outboxdriver.FailedOutcome{Lease: rec.Lease(), Error: "try again"}), 1)
	for claim := 2; claim <= 3; claim++ {
		rec = f.claimOne(workerA, lease)
		if rec.Attempts != 1 || rec.Envelope.Attempt != 2 || rec.ClaimCount != claim {
			f.t.Errorf("claim %d: Attempts %d Envelope.Attempt %d ClaimCount %d; want 1 2 %d",
				claim, rec.Attempts, rec.Envelope.Attempt, rec.ClaimCount, claim)
		}
		if st := f.inspect(id); st.Attempts != 1 || st.ClaimCount != claim {
			f.t.Errorf("claim %d: attempts %d claim_count %d; want 1 %d", claim, st.Attempts, st.ClaimCount, claim)
		}
		f.affected("Release", f.release(rec.Lease()), 1)
	}
}

func claimConcurrent(f *fixture) {
	const rows, claimers = 500, 8
	ids := f.enqueueN(rows)
	var (
		mu     sync.Mutex
		claims = make(map[reliar.MessageID]int, rows)
		wg     sync.WaitGroup
	)
	for c := range claimers {
		wg.Go(func() {
			req := outboxdriver.AcquireRequest{Worker: "storetest-claimer-" + string(rune('a'+c)), BatchSize: 10, Lease: time.Hour}
			for {
				b, err := f.h.Store.Acquire(f.ctx, req)
				if err != nil {
					f.t.Errorf("claimer %d: Acquire: %v", c, err)
					return
				}
				if len(b.Records) == 0 {
					return
				}
				mu.Lock()
				for _, r := range b.Records {
					claims[r.Envelope.ID]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	for _, id := range ids {
		if n := claims[id]; n != 1 {
			f.t.Errorf("row %s claimed %d times, want exactly once", id, n)
		}
	}
	if len(claims) != rows {
		f.t.Errorf("%d distinct rows claimed, want %d", len(claims), rows)
	}
	f.claimNone("every row is leased")
}
