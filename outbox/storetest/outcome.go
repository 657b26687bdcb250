package storetest

import (
	"strings"
	"time"
	"unicode/utf8"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

func fencingCases() []testCase {
	return []testCase{
		{name: "a wrong token affects nothing", run: fenceWrongToken},
		{name: "a stale token of the same worker affects nothing", run: fenceStaleSameWorker},
		{name: "outcome writes are idempotent", run: fenceIdempotent},
		{name: "a row is never both published and dead", run: fenceNeverBoth},
	}
}

func outcomeCases() []testCase {
	return []testCase{
		{name: "Complete publishes and clears the lease", run: outcomeComplete},
		{name: "Fail with a delay schedules a retry", run: outcomeRetry},
		{name: "Fail with a reason moves to dead", run: outcomeDead},
		{name: "Release clears the lease only", run: outcomeRelease},
		{name: "ExtendLease moves locked_until", run: outcomeExtend},
		{name: "last_error is sanitized and truncated", run: outcomeSanitize},
	}
}

// allOutcomes runs every fenced write with l and checks that none of them
// affected a row.
func (f *fixture) allOutcomes(what string, l outboxdriver.Lease) {
	f.t.Helper()
	f.affected(what+": Complete", f.complete(l), 0)
	f.affected(what+": Fail retry", f.fail(outboxdriver.FailedOutcome{Lease: l, Error: "x"}), 0)
	f.affected(what+": Fail dead", f.fail(outboxdriver.FailedOutcome{Lease: l, Error: "x", DeadReason: outboxdriver.DeadPermanent}), 0)
	f.affected(what+": Release", f.release(l), 0)
	f.affected(what+": ExtendLease", f.extend(time.Hour, l), 0)
}

// stillHeld checks that a row is pending, untouched by outcomes and held by
// the lease of rec.
func (f *fixture) stillHeld(rec outboxdriver.Record) {
	f.t.Helper()
	st := f.inspect(rec.Envelope.ID)
	if st.LeaseToken == nil || *st.LeaseToken != rec.Token {
		f.t.Errorf("lease_token = %v, want %s", deref(st.LeaseToken), rec.Token)
	}
	if st.Attempts != 0 || st.PublishedAt != nil || st.DeadAt != nil || st.LastError != nil {
		f.t.Errorf("attempts %d published_at %v dead_at %v last_error %v; want an untouched pending row",
			st.Attempts, deref(st.PublishedAt), deref(st.DeadAt), deref(st.LastError))
	}
}

func fenceWrongToken(f *fixture) {
	id := f.enqueueN(1)[0]
	rec := f.claimOne(workerA, lease)
	before := f.inspect(id).LockedUntil
	f.allOutcomes("random token", randomLease(id))
	f.allOutcomes("unknown id", randomLease(reliar.NewMessageID()))
	f.stillHeld(rec)
	if after := f.inspect(id).LockedUntil; before == nil || after == nil || !after.Equal(*before) {
		f.t.Errorf("locked_until moved from %v to %v", deref(before), deref(after))
	}
}

func fenceStaleSameWorker(f *fixture) {
	id := f.enqueueN(1)[0]
	stale := f.claimOne(workerA, lease)
	f.advance(lease + time.Minute)
	current := f.claimOne(workerA, lease)
	if !current.Reclaimed || current.Token == stale.Token {
		f.t.Fatalf("reclaim by the same worker: Reclaimed %v, token reused %v", current.Reclaimed, current.Token == stale.Token)
	}
	f.allOutcomes("stale token of the same worker", stale.Lease())
	f.stillHeld(current)
	f.affected("Complete with the current token", f.complete(current.Lease()), 1)
	if st := f.inspect(id); st.PublishedAt == nil || st.Attempts != 1 {
		f.t.Errorf("published_at %v attempts %d; want set and 1", deref(st.PublishedAt), st.Attempts)
	}
}

func fenceIdempotent(f *fixture) {
	ids := f.enqueueN(2)
	recs := f.claim(2)
	f.affected("Complete of two rows", f.complete(leases(recs)...), 2)
	f.affected("second Complete", f.complete(leases(recs)...), 0)
	f.allOutcomes("token of a published row", recs[0].Lease())
	for _, id := range ids {
		if st := f.inspect(id); st.Attempts != 1 || st.PublishedAt == nil {
			f.t.Errorf("row %s: attempts %d published_at %v; want 1 and set", id, st.Attempts, deref(st.PublishedAt))
		}
	}
}

func fenceNeverBoth(f *fixture) {
	f.enqueueN(2)
	recs := f.claim(2)
	f.affected("Complete", f.complete(recs[0].Lease()), 1)
	f.affected("Fail dead after Complete", f.fail(outboxdriver.FailedOutcome{Lease: recs[0].Lease(), Error: "late", DeadReason: outboxdriver.DeadPermanent}), 0)
	f.affected("Fail dead", f.fail(outboxdriver.FailedOutcome{Lease: recs[1].Lease(), Error: "bad", DeadReason: outboxdriver.DeadPermanent}), 1)
	f.affected("Complete after dead", f.complete(recs[1].Lease()), 0)
	f.advance(time.Hour)
	f.purge(outboxdriver.PurgeRequest{BatchSize: 10})
	for _, r := range recs {
		st := f.inspect(r.Envelope.ID)
		if (st.PublishedAt == nil) == (st.DeadAt == nil) {
			f.t.Errorf("row %s: published_at %v dead_at %v; want exactly one set", r.Envelope.ID, deref(st.PublishedAt), deref(st.DeadAt))
		}
		if (st.DeadAt == nil) != (st.DeadReason == nil) {
			f.t.Errorf("row %s: dead_at %v dead_reason %v; want both set or both NULL", r.Envelope.ID, deref(st.DeadAt), deref(st.DeadReason))
		}
	}
}

func outcomeComplete(f *fixture) {
	id := f.enqueueN(1)[0]
	rec := f.claimOne(workerA, lease)
	before := f.now()
	f.affected("Complete", f.complete(rec.Lease()), 1)
	after := f.now()
	st := f.inspect(id)
	f.near("published_at", st.PublishedAt, before, after)
	if st.Attempts != 1 || st.DeadAt != nil || st.DeadReason != nil {
		f.t.Errorf("attempts %d dead_at %v dead_reason %v; want 1, NULL, NULL", st.Attempts, deref(st.DeadAt), deref(st.DeadReason))
	}
	f.leaseCleared(id, st)
	f.advance(lease + time.Minute)
	f.claimNone("the only row is published")
	if s := f.stats(); s.Pending != 0 || s.Dead != 0 {
		f.t.Errorf("Stats: Pending %d Dead %d; want 0 0", s.Pending, s.Dead)
	}
}

func outcomeRetry(f *fixture) {
	id := f.enqueueN(1)[0]
	rec := f.claimOne(workerA, lease)
	before := f.now()
	f.affected("Fail retry", f.fail(outboxdriver.FailedOutcome{Lease: rec.Lease(), Error: "broker down", RetryAfter: 10 * time.Minute}), 1)
	after := f.now()
	st := f.inspect(id)
	if st.Attempts != 1 || st.LastError == nil || *st.LastError != "broker down" {
		f.t.Errorf("attempts %d last_error %v; want 1 and %q", st.Attempts, deref(st.LastError), "broker down")
	}
	if st.DeadAt != nil || st.PublishedAt != nil {
		f.t.Errorf("dead_at %v published_at %v; want a pending row", deref(st.DeadAt), deref(st.PublishedAt))
	}
	f.near("available_at", &st.AvailableAt, before.Add(10*time.Minute), after.Add(10*time.Minute))
	f.leaseCleared(id, st)
	f.claimNone("the retry is not due yet")
	f.advance(9 * time.Minute)
	f.claimNone("the retry is due in a minute")
	f.advance(2 * time.Minute)
	rec = f.claimOne(workerA, lease)
	if rec.Envelope.ID != id || rec.Attempts != 1 || rec.Envelope.Attempt != 2 || rec.Reclaimed {
		f.t.Errorf("retry claim: id %s Attempts %d Attempt %d Reclaimed %v; want %s 1 2 false",
			rec.Envelope.ID, rec.Attempts, rec.Envelope.Attempt, rec.Reclaimed, id)
	}
}

func outcomeDead(f *fixture) {
	id := f.enqueueN(1)[0]
	rec := f.claimOne(workerA, lease)
	before := f.now()
	f.affected("Fail dead", f.fail(outboxdriver.FailedOutcome{Lease: rec.Lease(), Error: "rejected", DeadReason: outboxdriver.DeadPermanent}), 1)
	after := f.now()
	st := f.inspect(id)
	f.near("dead_at", st.DeadAt, before, after)
	if st.Attempts != 1 || deref(st.DeadReason) != string(outboxdriver.DeadPermanent) || deref(st.LastError) != "rejected" || st.PublishedAt != nil {
		f.t.Errorf("attempts %d dead_reason %v last_error %v published_at %v; want 1, permanent, rejected, NULL",
			st.Attempts, deref(st.DeadReason), deref(st.LastError), deref(st.PublishedAt))
	}
	f.leaseCleared(id, st)
	f.advance(time.Hour)
	f.claimNone("the only row is dead")
	if s := f.stats(); s.Dead != 1 || s.Pending != 0 {
		f.t.Errorf("Stats: Dead %d Pending %d; want 1 0", s.Dead, s.Pending)
	}
}

func outcomeRelease(f *fixture) {
	id := f.enqueueN(1)[0]
	rec := f.claimOne(workerA, lease)
	f.affected("Release", f.release(rec.Lease()), 1)
	st := f.inspect(id)
	f.leaseCleared(id, st)
	if st.Attempts != 0 || st.LastError != nil || st.PublishedAt != nil || st.DeadAt != nil || st.ClaimCount != 1 {
		f.t.Errorf("attempts %d last_error %v published_at %v dead_at %v claim_count %d; want only the lease cleared",
			st.Attempts, deref(st.LastError), deref(st.PublishedAt), deref(st.DeadAt), st.ClaimCount)
	}
	if again := f.claimOne(workerB, lease); again.Envelope.ID != id {
		f.t.Errorf("claim after Release got %s, want %s at once", again.Envelope.ID, id)
	}
}

func outcomeExtend(f *fixture) {
	id := f.enqueueN(1)[0]
	rec := f.claimOne(workerA, lease)
	f.advance(lease / 2)
	before := f.now()
	f.affected("ExtendLease", f.extend(5*time.Minute, rec.Lease()), 1)
	after := f.now()
	st := f.inspect(id)
	f.near("locked_until", st.LockedUntil, before.Add(5*time.Minute), after.Add(5*time.Minute))
	if st.LeaseToken == nil || *st.LeaseToken != rec.Token || deref(st.LockedBy) != workerA || st.Attempts != 0 {
		f.t.Errorf("lease_token %v locked_by %v attempts %d; want the same lease and 0 attempts",
			deref(st.LeaseToken), deref(st.LockedBy), st.Attempts)
	}
	f.advance(2 * time.Minute)
	f.claimNone("the extended lease still runs")
	f.advance(4 * time.Minute)
	if again := f.claimOne(workerB, lease); again.Envelope.ID != id || !again.Reclaimed {
		f.t.Errorf("claim after the extended lease lapsed: %s Reclaimed %v; want %s true", again.Envelope.ID, again.Reclaimed, id)
	}
}

func outcomeSanitize(f *fixture) {
	ids := f.enqueueN(2)
	recs := f.claim(2)
	// NUL bytes and invalid UTF-8 go; the rest is cut at a rune boundary.
	raw := "a\x00b\xffc " + strings.Repeat("é", 2*outboxdriver.MaxErrorBytes)
	f.affected("Fail", f.fail(
		outboxdriver.FailedOutcome{Lease: recs[0].Lease(), Error: raw, RetryAfter: time.Minute},
		outboxdriver.FailedOutcome{Lease: recs[1].Lease(), Error: raw, DeadReason: outboxdriver.DeadPermanent},
	), 2)
	for _, id := range ids {
		st := f.inspect(id)
		got := deref(st.LastError).(string)
		switch {
		case !utf8.ValidString(got), strings.ContainsRune(got, 0):
			f.t.Errorf("row %s: last_error keeps NUL or invalid UTF-8: %q", id, got[:min(len(got), 16)])
		case len(got) > outboxdriver.MaxErrorBytes || len(got) < outboxdriver.MaxErrorBytes-utf8.UTFMax:
			f.t.Errorf("row %s: last_error is %d bytes, want at most %d and cut at the last rune boundary", id, len(got), outboxdriver.MaxErrorBytes)
		case !strings.HasPrefix(got, "abc é"):
			f.t.Errorf("row %s: last_error starts %q, want %q", id, got[:min(len(got), 16)], "abc é")
		}
	}
}
