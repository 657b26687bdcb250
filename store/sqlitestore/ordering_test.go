package sqlitestore_test

import (
	"testing"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
	"github.com/reliar/reliar/store/sqlitestore"
)

func keyedMsgs(keys ...string) []reliar.Outgoing {
	msgs := newMsgs(len(keys))
	for i := range msgs {
		msgs[i].OrderingKey = keys[i]
	}
	return msgs
}

// Per-key claims take only the head row of each key; a held, retrying or
// dead head decides when the next row of its key may go.
func TestPerKeyOrdering(t *testing.T) {
	ctx := t.Context()
	clk := newClock()
	s := newStore(t, sqlitestore.WithClock(clk.now))
	msgs := keyedMsgs("a", "a", "b", "", "a", "b")
	if err := enqueue(ctx, s, msgs...); err != nil {
		t.Fatal(err)
	}
	perKey := outboxdriver.AcquireRequest{Worker: "w", BatchSize: 10, Lease: time.Minute, Ordering: outboxdriver.PerKey}
	claim := func(want ...int) []outboxdriver.Record {
		t.Helper()
		b, err := s.Acquire(ctx, perKey)
		if err != nil {
			t.Fatal(err)
		}
		if len(b.Records) != len(want) {
			t.Fatalf("claimed %d rows, want %d (messages %v)", len(b.Records), len(want), want)
		}
		for i, r := range b.Records {
			if r.Envelope.ID != msgs[want[i]].ID {
				t.Fatalf("record %d is not message %d", i, want[i])
			}
		}
		return b.Records
	}
	// Heads of a and b, and the unkeyed row.
	recs := claim(0, 2, 3)
	claim() // every key is held
	// a's head retries later: a stays blocked; b's head is published.
	if _, err := s.Fail(ctx, []outboxdriver.FailedOutcome{{Lease: recs[0].Lease(), Error: "x", RetryAfter: time.Minute}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Complete(ctx, []outboxdriver.Lease{recs[1].Lease(), recs[2].Lease()}); err != nil {
		t.Fatal(err)
	}
	recs = claim(5)
	if _, err := s.Complete(ctx, []outboxdriver.Lease{recs[0].Lease()}); err != nil {
		t.Fatal(err)
	}
	// a's head goes dead: that unblocks a.
	clk.add(2 * time.Minute)
	a := claim(0)
	if _, err := s.Fail(ctx, []outboxdriver.FailedOutcome{{Lease: a[0].Lease(), Error: "x", DeadReason: outboxdriver.DeadMaxAttempts}}); err != nil {
		t.Fatal(err)
	}
	claim(1)
}
