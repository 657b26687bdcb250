package storetest

import (
	"time"

	"github.com/reliar/reliar/outbox/outboxdriver"
)

func lapseCases() []testCase {
	return []testCase{
		{name: "a lapsed lease is reclaimed and counted", run: lapseReclaim},
		{name: "released and retried rows are not lapses", run: lapseNotOnRelease},
		{name: "MaxClaims moves a row that keeps lapsing to dead", run: lapseMaxClaims},
		{name: "MaxClaims zero disables the check", run: lapseMaxClaimsZero},
		{name: "MaxClaims counts only reclaims of a lapsed lease", run: lapseMaxClaimsOnlyOnReclaim},
	}
}

func lapseReclaim(f *fixture) {
	id := f.enqueueN(1)[0]
	first := f.claimOne(workerA, lease)
	f.advance(lease + time.Minute)
	now := f.now()
	rec := f.claimOne(workerB, lease)
	if !rec.Reclaimed || rec.LapsedClaims != 1 || rec.ClaimCount != 2 || rec.Attempts != 0 {
		f.t.Errorf("reclaim: Reclaimed %v LapsedClaims %d ClaimCount %d Attempts %d; want true 1 2 0",
			rec.Reclaimed, rec.LapsedClaims, rec.ClaimCount, rec.Attempts)
	}
	// The first claim happened lease+1m ago by the store's clock.
	f.near("PrevClaimedAt", rec.PrevClaimedAt, now.Add(-lease-time.Minute), now.Add(-lease-time.Minute))
	if rec.Token == first.Token {
		f.t.Errorf("reclaim kept the lapsed token %s", rec.Token)
	}
	st := f.inspect(id)
	if st.LapsedClaims != 1 || st.ClaimCount != 2 || st.Attempts != 0 {
		f.t.Errorf("lapsed_claims %d claim_count %d attempts %d; want 1 2 0", st.LapsedClaims, st.ClaimCount, st.Attempts)
	}
	if st.LockedBy == nil || *st.LockedBy != workerB {
		f.t.Errorf("locked_by = %v, want %q", deref(st.LockedBy), workerB)
	}
}

func lapseNotOnRelease(f *fixture) {
	id := f.enqueueN(1)[0]
	rec := f.claimOne(workerA, lease)
	f.affected("Release", f.release(rec.Lease()), 1)
	f.advance(lease + time.Minute)
	rec = f.claimOne(workerB, lease)
	if rec.Reclaimed || rec.LapsedClaims != 0 {
		f.t.Errorf("claim after Release: Reclaimed %v LapsedClaims %d; want false 0", rec.Reclaimed, rec.LapsedClaims)
	}
	f.affected("Fail retry", f.fail(outboxdriver.FailedOutcome{Lease: rec.Lease(), Error: "again"}), 1)
	f.advance(lease + time.Minute)
	rec = f.claimOne(workerA, lease)
	if rec.Reclaimed || rec.LapsedClaims != 0 {
		f.t.Errorf("claim after a retry: Reclaimed %v LapsedClaims %d; want false 0", rec.Reclaimed, rec.LapsedClaims)
	}
	if st := f.inspect(id); st.LapsedClaims != 0 || st.ClaimCount != 3 {
		f.t.Errorf("lapsed_claims %d claim_count %d; want 0 3", st.LapsedClaims, st.ClaimCount)
	}
}

func lapseMaxClaims(f *fixture) {
	const maxClaims = 2
	crashing := f.enqueueN(1)[0]
	req := outboxdriver.AcquireRequest{Worker: workerA, BatchSize: 10, MaxClaims: maxClaims}
	// The first claim and maxClaims lapsed reclaims hand the row out.
	for claim := 0; claim <= maxClaims; claim++ {
		b := f.acquire(req)
		if len(b.Records) != 1 || b.Records[0].LapsedClaims != claim {
			f.t.Fatalf("claim %d: got %d records (%+v), want the row with %d lapsed claims", claim+1, len(b.Records), b.Records, claim)
		}
		f.advance(lease + time.Minute)
	}
	healthy := f.enqueueN(1)[0]
	b := f.acquire(req)
	if len(b.DeadMaxClaims) != 1 || b.DeadMaxClaims[0] != crashing {
		f.t.Fatalf("DeadMaxClaims = %v, want [%s]", b.DeadMaxClaims, crashing)
	}
	if len(b.Records) != 1 || b.Records[0].Envelope.ID != healthy {
		f.t.Fatalf("Records = %v, want only the healthy row %s", recordIDs(b.Records), healthy)
	}
	if b.Len() != 2 {
		f.t.Errorf("batch Len() = %d, want 2", b.Len())
	}
	st := f.inspect(crashing)
	if st.DeadReason == nil || *st.DeadReason != string(outboxdriver.DeadMaxClaims) || st.DeadAt == nil || st.PublishedAt != nil {
		f.t.Errorf("dead_reason %v dead_at %v published_at %v; want max_claims, set, NULL",
			deref(st.DeadReason), deref(st.DeadAt), deref(st.PublishedAt))
	}
	f.leaseCleared(crashing, st)
	if got := f.stats().Dead; got != 1 {
		f.t.Errorf("Stats.Dead = %d, want 1", got)
	}
	f.advance(lease + time.Minute)
	b = f.acquire(req)
	if len(b.Records) != 1 || b.Records[0].Envelope.ID != healthy || len(b.DeadMaxClaims) != 0 {
		f.t.Errorf("next claim: records %v dead %v; want only the healthy row reclaimed", recordIDs(b.Records), b.DeadMaxClaims)
	}
}

func lapseMaxClaimsZero(f *fixture) {
	f.enqueueN(1)
	req := outboxdriver.AcquireRequest{Worker: workerA, BatchSize: 10}
	for claim := 0; claim <= 4; claim++ {
		b := f.acquire(req)
		if len(b.Records) != 1 || b.Records[0].LapsedClaims != claim || len(b.DeadMaxClaims) != 0 {
			f.t.Fatalf("claim %d: records %d dead %v; want the row with %d lapsed claims", claim+1, len(b.Records), b.DeadMaxClaims, claim)
		}
		f.advance(lease + time.Minute)
	}
}

// lapseMaxClaimsOnlyOnReclaim: a row that lapsed MaxClaims times and was then
// handed back without an outcome (a transient failure, a release by the
// circuit breaker) is claimed again as usual: MaxClaims bounds reclaims of a
// lapsed lease, never an ordinary claim, so a broker outage dead-letters
// nothing.
func lapseMaxClaimsOnlyOnReclaim(f *fixture) {
	const maxClaims = 2
	id := f.enqueueN(1)[0]
	req := outboxdriver.AcquireRequest{Worker: workerA, BatchSize: 10, MaxClaims: maxClaims}
	var rec outboxdriver.Record
	for claim := 0; claim <= maxClaims; claim++ {
		b := f.acquire(req)
		if len(b.Records) != 1 || b.Records[0].LapsedClaims != claim {
			f.t.Fatalf("claim %d: got %d records (dead %v), want the row with %d lapsed claims", claim+1, len(b.Records), b.DeadMaxClaims, claim)
		}
		rec = b.Records[0]
		if claim < maxClaims {
			f.advance(lease + time.Minute)
		}
	}
	// The row has lapsed maxClaims times; its holder now fails it
	// transiently, then the next holder releases it.
	f.affected("Fail retry", f.fail(outboxdriver.FailedOutcome{Lease: rec.Lease(), Error: "broker down"}), 1)
	for _, step := range []string{"after a transient failure", "after a release"} {
		b := f.acquire(req)
		if len(b.DeadMaxClaims) != 0 || len(b.Records) != 1 || b.Records[0].Envelope.ID != id {
			f.t.Fatalf("claim %s: records %v dead %v; want the row claimed, not dead", step, recordIDs(b.Records), b.DeadMaxClaims)
		}
		if r := b.Records[0]; r.Reclaimed || r.LapsedClaims != maxClaims {
			f.t.Errorf("claim %s: Reclaimed %v LapsedClaims %d; want false %d", step, r.Reclaimed, r.LapsedClaims, maxClaims)
		}
		f.affected("Release", f.release(b.Records[0].Lease()), 1)
	}
	if st := f.inspect(id); st.DeadAt != nil || st.LapsedClaims != maxClaims {
		f.t.Errorf("dead_at %v lapsed_claims %d; want pending with %d lapsed claims", deref(st.DeadAt), st.LapsedClaims, maxClaims)
	}
}
