package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// The suite's defaults.
const (
	// lease is the lease of claims that do not say otherwise.
	lease = time.Minute
	// slack is how far a stored time may be from the time the suite expects:
	// the store's clock is read before and after each call, and some
	// databases keep coarser timestamps.
	slack = 5 * time.Second
	// workerA and workerB are the claimers' names.
	workerA = "storetest-worker-a"
	workerB = "storetest-worker-b"
)

// fixture is one subtest's store and the helpers that drive it. Every helper
// fails the test at once when the store returns an error.
type fixture struct {
	t   *testing.T
	ctx context.Context
	h   Harness
}

func newFixture(t *testing.T, newHarness Factory) *fixture {
	t.Helper()
	h := newHarness(t)
	switch {
	case h.Store == nil:
		t.Fatal("factory returned a harness without a Store")
	case h.Enqueue == nil, h.InsertRow == nil, h.Inspect == nil, h.Advance == nil:
		t.Fatal("factory returned a harness without Enqueue, InsertRow, Inspect or Advance")
	}
	return &fixture{t: t, ctx: t.Context(), h: h}
}

// now is the store's clock.
func (f *fixture) now() time.Time {
	f.t.Helper()
	return f.stats().AsOf
}

func (f *fixture) stats() outboxdriver.Stats {
	f.t.Helper()
	st, err := f.h.Store.Stats(f.ctx)
	if err != nil {
		f.t.Fatalf("Stats: %v", err)
	}
	return st
}

func (f *fixture) advance(d time.Duration) {
	f.t.Helper()
	if err := f.h.Advance(f.ctx, d); err != nil {
		f.t.Fatalf("Advance(%v): %v", d, err)
	}
}

// enqueue stores msgs in one call and returns their ids.
func (f *fixture) enqueue(msgs ...reliar.Outgoing) []reliar.MessageID {
	f.t.Helper()
	if err := f.h.Enqueue(f.ctx, msgs...); err != nil {
		f.t.Fatalf("Enqueue of %d messages: %v", len(msgs), err)
	}
	return msgIDs(msgs)
}

// enqueueN stores n fresh messages in one call and returns their ids.
func (f *fixture) enqueueN(n int) []reliar.MessageID {
	f.t.Helper()
	msgs := make([]reliar.Outgoing, n)
	for i := range msgs {
		msgs[i] = newMsg(i)
	}
	return f.enqueue(msgs...)
}

func (f *fixture) insertRow(r outboxdriver.Row) {
	f.t.Helper()
	if err := f.h.InsertRow(f.ctx, r); err != nil {
		f.t.Fatalf("InsertRow %s: %v", r.ID, err)
	}
}

// acquire claims with req, filling in workerA, the default lease and a batch
// of 100 where req leaves them zero.
func (f *fixture) acquire(req outboxdriver.AcquireRequest) outboxdriver.AcquiredBatch {
	f.t.Helper()
	if req.Worker == "" {
		req.Worker = workerA
	}
	if req.Lease == 0 {
		req.Lease = lease
	}
	if req.BatchSize == 0 {
		req.BatchSize = 100
	}
	b, err := f.h.Store.Acquire(f.ctx, req)
	if err != nil {
		f.t.Fatalf("Acquire(%+v): %v", req, err)
	}
	if b.Len() > req.BatchSize {
		f.t.Fatalf("Acquire(BatchSize %d) consumed %d rows", req.BatchSize, b.Len())
	}
	return b
}

// claim claims up to n rows as workerA and returns the records.
func (f *fixture) claim(n int) []outboxdriver.Record {
	f.t.Helper()
	return f.acquire(outboxdriver.AcquireRequest{BatchSize: n}).Records
}

// claimOne claims exactly one row as worker with the given lease.
func (f *fixture) claimOne(worker string, d time.Duration) outboxdriver.Record {
	f.t.Helper()
	recs := f.acquire(outboxdriver.AcquireRequest{Worker: worker, BatchSize: 1, Lease: d}).Records
	if len(recs) != 1 {
		f.t.Fatalf("Acquire as %s: got %d records, want 1", worker, len(recs))
	}
	return recs[0]
}

// claimNone checks that a claim finds nothing.
func (f *fixture) claimNone(why string) {
	f.t.Helper()
	b := f.acquire(outboxdriver.AcquireRequest{Worker: workerB})
	if b.Len() != 0 {
		f.t.Fatalf("%s: Acquire consumed %d rows (%v), want none", why, b.Len(), recordIDs(b.Records))
	}
}

func (f *fixture) inspect(id reliar.MessageID) RowState {
	f.t.Helper()
	st, err := f.h.Inspect(f.ctx, id)
	if err != nil {
		f.t.Fatalf("Inspect %s: %v", id, err)
	}
	return st
}

// gone checks that the row with id no longer exists (or never did).
func (f *fixture) gone(id reliar.MessageID) {
	f.t.Helper()
	if _, err := f.h.Inspect(f.ctx, id); !errors.Is(err, ErrNoRow) {
		f.t.Fatalf("Inspect %s: got error %v, want ErrNoRow", id, err)
	}
}

func (f *fixture) complete(leases ...outboxdriver.Lease) int64 {
	f.t.Helper()
	n, err := f.h.Store.Complete(f.ctx, leases)
	if err != nil {
		f.t.Fatalf("Complete: %v", err)
	}
	return n
}

func (f *fixture) fail(failures ...outboxdriver.FailedOutcome) int64 {
	f.t.Helper()
	n, err := f.h.Store.Fail(f.ctx, failures)
	if err != nil {
		f.t.Fatalf("Fail: %v", err)
	}
	return n
}

func (f *fixture) release(leases ...outboxdriver.Lease) int64 {
	f.t.Helper()
	n, err := f.h.Store.Release(f.ctx, leases)
	if err != nil {
		f.t.Fatalf("Release: %v", err)
	}
	return n
}

func (f *fixture) extend(d time.Duration, leases ...outboxdriver.Lease) int64 {
	f.t.Helper()
	n, err := f.h.Store.ExtendLease(f.ctx, leases, d)
	if err != nil {
		f.t.Fatalf("ExtendLease: %v", err)
	}
	return n
}

func (f *fixture) purge(req outboxdriver.PurgeRequest) outboxdriver.PurgeReport {
	f.t.Helper()
	rep, err := f.h.Store.Purge(f.ctx, req)
	if err != nil {
		f.t.Fatalf("Purge: %v", err)
	}
	return rep
}

// affected checks the row count an operation reported.
func (f *fixture) affected(op string, got, want int64) {
	f.t.Helper()
	if got != want {
		f.t.Fatalf("%s affected %d rows, want %d", op, got, want)
	}
}

// kill enqueues msgs, claims them and fails them dead with reason, in one
// call each, and returns their ids. No other row may be due.
func (f *fixture) kill(reason outboxdriver.DeadReason, msgs ...reliar.Outgoing) []reliar.MessageID {
	f.t.Helper()
	ids := f.enqueue(msgs...)
	recs := f.claim(len(msgs))
	if !sameIDs(recordIDs(recs), ids) {
		f.t.Fatalf("claimed %v, want the fresh messages %v", recordIDs(recs), ids)
	}
	failures := make([]outboxdriver.FailedOutcome, len(recs))
	for i, r := range recs {
		failures[i] = outboxdriver.FailedOutcome{Lease: r.Lease(), Error: "storetest: dead on purpose", DeadReason: reason}
	}
	f.affected("Fail dead", f.fail(failures...), int64(len(recs)))
	return ids
}

// leaseCleared checks that a row holds no lease at all.
func (f *fixture) leaseCleared(id reliar.MessageID, st RowState) {
	f.t.Helper()
	if st.LockedBy != nil || st.LockedUntil != nil || st.LeaseToken != nil {
		f.t.Errorf("row %s: lease not cleared: locked_by %v, locked_until %v, lease_token %v",
			id, deref(st.LockedBy), deref(st.LockedUntil), deref(st.LeaseToken))
	}
}

// near checks that got lies within [lo, hi] give or take slack.
func (f *fixture) near(what string, got *time.Time, lo, hi time.Time) {
	f.t.Helper()
	if got == nil {
		f.t.Errorf("%s is NULL, want a time in [%v, %v]", what, lo, hi)
		return
	}
	if got.Before(lo.Add(-slack)) || got.After(hi.Add(slack)) {
		f.t.Errorf("%s = %v, want within %v of [%v, %v]", what, *got, slack, lo, hi)
	}
}

// nearDuration checks that got is want give or take slack.
func (f *fixture) nearDuration(what string, got, want time.Duration) {
	f.t.Helper()
	if got < want-slack || got > want+slack {
		f.t.Errorf("%s = %v, want %v ± %v", what, got, want, slack)
	}
}

func leases(recs []outboxdriver.Record) []outboxdriver.Lease {
	out := make([]outboxdriver.Lease, len(recs))
	for i := range recs {
		out[i] = recs[i].Lease()
	}
	return out
}

func recordIDs(recs []outboxdriver.Record) []reliar.MessageID {
	out := make([]reliar.MessageID, len(recs))
	for i := range recs {
		out[i] = recs[i].Envelope.ID
	}
	return out
}

func msgIDs(msgs []reliar.Outgoing) []reliar.MessageID {
	out := make([]reliar.MessageID, len(msgs))
	for i := range msgs {
		out[i] = msgs[i].ID
	}
	return out
}

// sameIDs reports whether got and want hold the same ids, in any order.
func sameIDs(got, want []reliar.MessageID) bool {
	if len(got) != len(want) {
		return false
	}
	seen := make(map[reliar.MessageID]int, len(want))
	for _, id := range want {
		seen[id]++
	}
	for _, id := range got {
		if seen[id] == 0 {
			return false
		}
		seen[id]--
	}
	return true
}

func deref[T any](p *T) any {
	if p == nil {
		return "NULL"
	}
	return *p
}

func ptr[T any](v T) *T { return &v }

// randomLease is a lease no claim ever gave out.
func randomLease(id reliar.MessageID) outboxdriver.Lease {
	return outboxdriver.Lease{ID: id, Token: uuid.New()}
}
