package sqlitestore_test

import (
	"errors"
	"testing"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
	"github.com/reliar/reliar/store/sqlitestore"
)

// clock is a settable clock for the store.
type clock struct{ t time.Time }

func (c *clock) now() time.Time      { return c.t }
func (c *clock) add(d time.Duration) { c.t = c.t.Add(d) }
func newClock() *clock               { return &clock{t: time.Now().UTC().Truncate(time.Microsecond)} }
func acquireReq(n int) outboxdriver.AcquireRequest {
	return outboxdriver.AcquireRequest{Worker: "w", BatchSize: n, Lease: time.Minute, MaxClaims: 2}
}

func TestLifecycle(t *testing.T) {
	ctx := t.Context()
	clk := newClock()
	s := newStore(t, sqlitestore.WithClock(clk.now))
	msgs := newMsgs(3)
	if err := enqueue(ctx, s, msgs...); err != nil {
		t.Fatal(err)
	}
	b, err := s.Acquire(ctx, acquireReq(10))
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Records) != 3 {
		t.Fatalf("claimed %d, want 3", len(b.Records))
	}
	for i, r := range b.Records {
		if r.Envelope.ID != msgs[i].ID {
			t.Errorf("record %d is %s, want %s (claim order)", i, r.Envelope.ID, msgs[i].ID)
		}
		if r.ClaimCount != 1 || r.Reclaimed || r.PrevClaimedAt != nil || r.Envelope.Attempt != 1 {
			t.Errorf("record %d: %+v", i, r)
		}
	}
	if b2, err := s.Acquire(ctx, acquireReq(10)); err != nil || b2.Len() != 0 {
		t.Fatalf("second claim: %d rows, %v", b2.Len(), err)
	}

	n, err := s.Complete(ctx, []outboxdriver.Lease{b.Records[0].Lease()})
	if err != nil || n != 1 {
		t.Fatalf("Complete: %d, %v", n, err)
	}
	n, err = s.Fail(ctx, []outboxdriver.FailedOutcome{
		{Lease: b.Records[1].Lease(), Error: "boom\x00", RetryAfter: time.Second},
		{Lease: b.Records[2].Lease(), Error: "bad", DeadReason: outboxdriver.DeadPermanent},
	})
	if err != nil || n != 2 {
		t.Fatalf("Fail: %d, %v", n, err)
	}
	// A stale token affects nothing.
	if n, err := s.Complete(ctx, []outboxdriver.Lease{b.Records[1].Lease()}); err != nil || n != 0 {
		t.Fatalf("stale Complete: %d, %v", n, err)
	}
	st, err := s.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Scheduled != 1 || st.Dead != 1 || st.Pending != 1 || st.Due != 0 {
		t.Fatalf("stats: %+v", st)
	}
	clk.add(2 * time.Second)
	b, err = s.Acquire(ctx, acquireReq(10))
	if err != nil || len(b.Records) != 1 || b.Records[0].Envelope.Attempt != 2 {
		t.Fatalf("retry claim: %+v, %v", b, err)
	}
	if b.Records[0].PrevClaimedAt == nil {
		t.Error("PrevClaimedAt not set on a second claim")
	}

	page, err := s.ListDead(ctx, outboxdriver.DeadQuery{})
	if err != nil || len(page.Records) != 1 {
		t.Fatalf("ListDead: %+v, %v", page, err)
	}
	if d := page.Records[0]; d.DeadReason != outboxdriver.DeadPermanent || d.LastError != "bad" || d.Attempts != 1 {
		t.Errorf("dead record: %+v", d)
	}
	if n, err := s.RetryDead(ctx, []reliar.MessageID{msgs[2].ID, msgs[0].ID}); err != nil || n != 1 {
		t.Fatalf("RetryDead: %d, %v", n, err)
	}
	if n, err := s.PurgeDead(ctx, []reliar.MessageID{msgs[2].ID}); err != nil || n != 0 {
		t.Fatalf("PurgeDead of a retried row: %d, %v", n, err)
	}
}

func TestLapsedReclaimAndMaxClaims(t *testing.T) {
	ctx := t.Context()
	clk := newClock()
	s := newStore(t, sqlitestore.WithClock(clk.now))
	if err := enqueue(ctx, s, newMsgs(1)...); err != nil {
		t.Fatal(err)
	}
	var prev outboxdriver.Record
	for i := range 3 {
		b, err := s.Acquire(ctx, acquireReq(1))
		if err != nil {
			t.Fatal(err)
		}
		if len(b.Records) != 1 {
			t.Fatalf("claim %d: %+v", i, b)
		}
		r := b.Records[0]
		if r.LapsedClaims != i || r.Reclaimed != (i > 0) || r.ClaimCount != i+1 {
			t.Errorf("claim %d: lapsed %d reclaimed %v count %d", i, r.LapsedClaims, r.Reclaimed, r.ClaimCount)
		}
		if i > 0 {
			if n, _ := s.Complete(ctx, []outboxdriver.Lease{prev.Lease()}); n != 0 {
				t.Errorf("claim %d: the previous holder's Complete landed", i)
			}
		}
		prev = r
		clk.add(2 * time.Minute)
	}
	b, err := s.Acquire(ctx, acquireReq(1))
	if err != nil {
		t.Fatal(err)
	}
	if len(b.DeadMaxClaims) != 1 || b.Len() != 1 {
		t.Fatalf("want a max_claims death, got %+v", b)
	}
	page, err := s.ListDead(ctx, outboxdriver.DeadQuery{})
	if err != nil || len(page.Records) != 1 || page.Records[0].DeadReason != outboxdriver.DeadMaxClaims {
		t.Fatalf("ListDead: %+v, %v", page, err)
	}
}

func TestAcquireRejectsZeroLease(t *testing.T) {
	s := newStore(t)
	_, err := s.Acquire(t.Context(), outboxdriver.AcquireRequest{Worker: "w", BatchSize: 1})
	if !errors.Is(err, sqlitestore.ErrInvalidRequest) || !reliar.IsPermanent(err) {
		t.Fatalf("Acquire with no lease: %v", err)
	}
}
