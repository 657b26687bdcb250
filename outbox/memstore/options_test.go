package memstore_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/memstore"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

type note struct {
	Text string `json:"text"`
}

func (note) MessageType() string { return "memstore.note" }

// plainText serializes a note as its bare text.
type plainText struct{}

func (plainText) ContentType() string { return "text/plain" }
func (plainText) Serialize(body any) ([]byte, error) {
	n, ok := body.(note)
	if !ok {
		return nil, errors.New("plainText: not a note")
	}
	return []byte(n.Text), nil
}

func claimAll(t *testing.T, s *memstore.Store) []outboxdriver.Record {
	t.Helper()
	b, err := s.Acquire(t.Context(), outboxdriver.AcquireRequest{Worker: "w", BatchSize: 100, Lease: time.Minute})
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	return b.Records
}

func TestOptions(t *testing.T) {
	fixed := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name  string
		opts  []memstore.Option
		body  note
		check func(t *testing.T, s *memstore.Store, err error)
	}{
		{
			name: "defaults",
			body: note{Text: "hi"},
			check: func(t *testing.T, s *memstore.Store, err error) {
				if err != nil {
					t.Fatalf("Enqueue: %v", err)
				}
				if recs := claimAll(t, s); len(recs) != 1 || recs[0].Envelope.ContentType != "application/json" {
					t.Errorf("records %+v, want one JSON record", recs)
				}
			},
		},
		{
			name: "max payload bytes",
			opts: []memstore.Option{memstore.WithMaxPayloadBytes(8)},
			body: note{Text: "longer than eight bytes"},
			check: func(t *testing.T, s *memstore.Store, err error) {
				if !errors.Is(err, outboxdriver.ErrPayloadTooLarge) {
					t.Fatalf("Enqueue error %v, want ErrPayloadTooLarge", err)
				}
			},
		},
		{
			name: "serializer",
			opts: []memstore.Option{memstore.WithSerializer(plainText{})},
			body: note{Text: "plain"},
			check: func(t *testing.T, s *memstore.Store, err error) {
				if err != nil {
					t.Fatalf("Enqueue: %v", err)
				}
				recs := claimAll(t, s)
				if len(recs) != 1 || recs[0].Envelope.ContentType != "text/plain" || string(recs[0].Envelope.Payload) != "plain" {
					t.Errorf("records %+v, want one text/plain record", recs)
				}
			},
		},
		{
			name: "clock",
			opts: []memstore.Option{memstore.WithClock(func() time.Time { return fixed })},
			body: note{Text: "when"},
			check: func(t *testing.T, s *memstore.Store, err error) {
				if err != nil {
					t.Fatalf("Enqueue: %v", err)
				}
				s.Advance(time.Hour)
				s.Advance(-time.Hour) // ignored
				st, _ := s.Stats(t.Context())
				if want := fixed.Add(time.Hour); !st.AsOf.Equal(want) || st.OldestDueAge != time.Hour {
					t.Errorf("AsOf %v OldestDueAge %v, want %v and 1h", st.AsOf, st.OldestDueAge, want)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := memstore.New(tt.opts...)
			if err != nil {
				t.Fatal(err)
			}
			_, err = s.Enqueue(t.Context(), reliar.NewMsg(tt.body))
			tt.check(t, s, err)
		})
	}
}

func TestInvalidOptionsRefused(t *testing.T) {
	for name, opt := range map[string]memstore.Option{
		"nil clock":            memstore.WithClock(nil),
		"nil serializer":       memstore.WithSerializer(nil),
		"zero payload limit":   memstore.WithMaxPayloadBytes(0),
		"negative payload cap": memstore.WithMaxPayloadBytes(-1),
	} {
		if s, err := memstore.New(opt); !errors.Is(err, memstore.ErrInvalidOption) || s != nil {
			t.Errorf("%s: New = %v, %v; want ErrInvalidOption", name, s, err)
		}
	}
}

func TestCancelledContext(t *testing.T) {
	s := newMemStore()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	ops := map[string]func() error{
		"Enqueue":     func() error { _, err := s.Enqueue(ctx, reliar.NewMsg(note{})); return err },
		"Acquire":     func() error { _, err := s.Acquire(ctx, outboxdriver.AcquireRequest{BatchSize: 1}); return err },
		"Complete":    func() error { _, err := s.Complete(ctx, nil); return err },
		"Fail":        func() error { _, err := s.Fail(ctx, nil); return err },
		"Release":     func() error { _, err := s.Release(ctx, nil); return err },
		"ExtendLease": func() error { _, err := s.ExtendLease(ctx, nil, time.Minute); return err },
		"Purge":       func() error { _, err := s.Purge(ctx, outboxdriver.PurgeRequest{}); return err },
		"Stats":       func() error { _, err := s.Stats(ctx); return err },
		"ListDead":    func() error { _, err := s.ListDead(ctx, outboxdriver.DeadQuery{}); return err },
		"RetryDead":   func() error { _, err := s.RetryDead(ctx, nil); return err },
		"PurgeDead":   func() error { _, err := s.PurgeDead(ctx, nil); return err },
		"Wakeups":     func() error { _, err := s.Wakeups(ctx); return err },
		"TryLockMaintenance": func() error {
			_, _, err := s.TryLockMaintenance(ctx)
			return err
		},
	}
	for name, op := range ops {
		if err := op(); !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context: error %v, want context.Canceled", name, err)
		}
	}
}

func TestEnqueueRejectsInvalid(t *testing.T) {
	s := newMemStore()
	good := reliar.NewMsg(note{Text: "ok"})
	if _, err := s.Enqueue(t.Context(), good, reliar.Outgoing{}); err == nil {
		t.Fatal("Enqueue of a message without a body succeeded")
	}
	if _, ok := s.Inspect(good.ID); ok {
		t.Error("the valid message of a failed Enqueue was written")
	}
	ids, err := s.Enqueue(t.Context())
	if err != nil || len(ids) != 0 {
		t.Errorf("empty Enqueue = %v, %v; want no ids and no error", ids, err)
	}
}

func TestAcquireZeroBatch(t *testing.T) {
	s := newMemStore()
	if _, err := s.Enqueue(t.Context(), reliar.NewMsg(note{})); err != nil {
		t.Fatal(err)
	}
	b, err := s.Acquire(t.Context(), outboxdriver.AcquireRequest{Worker: "w"})
	if err != nil || b.Len() != 0 {
		t.Errorf("Acquire with BatchSize 0 = %d rows, %v; want nothing", b.Len(), err)
	}
}

func TestWakeupsCoalesce(t *testing.T) {
	s := newMemStore()
	ctx, cancel := context.WithCancel(t.Context())
	ch, err := s.Wakeups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := s.Enqueue(t.Context(), reliar.NewMsg(note{})); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(ch); n != 1 {
		t.Errorf("%d signals buffered after three enqueues, want them coalesced into 1", n)
	}
	<-ch
	cancel()
	if _, open := <-ch; open {
		t.Error("a signal arrived after the channel was drained")
	}
	// Enqueues after the listener left must not block or panic.
	if _, err := s.Enqueue(t.Context(), reliar.NewMsg(note{})); err != nil {
		t.Fatal(err)
	}
}

func TestMaintenanceUnlockTwice(t *testing.T) {
	s := newMemStore()
	unlock, ok, err := s.TryLockMaintenance(t.Context())
	if err != nil || !ok {
		t.Fatalf("TryLockMaintenance = %v, %v", ok, err)
	}
	unlock()
	other, ok, _ := s.TryLockMaintenance(t.Context())
	if !ok {
		t.Fatal("lock not free after unlock")
	}
	unlock() // a second call of the first unlock must not free the new holder
	if _, ok, _ := s.TryLockMaintenance(t.Context()); ok {
		t.Error("a stale unlock released the current holder's lock")
	}
	other()
}

// The store reads time.Now, so inside a synctest bubble time is fake: a
// delayed message becomes due when the bubble's clock passes its time.
func TestSynctestClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newMemStore()
		m := reliar.NewMsg(note{Text: "later"})
		m.AvailableAt = time.Now().Add(time.Minute)
		if _, err := s.Enqueue(t.Context(), m); err != nil {
			t.Fatal(err)
		}
		if recs := claimAll(t, s); len(recs) != 0 {
			t.Fatalf("claimed %d rows a minute early", len(recs))
		}
		time.Sleep(time.Minute)
		if recs := claimAll(t, s); len(recs) != 1 {
			t.Fatalf("claimed %d rows when due, want 1", len(recs))
		}
	})
}

// A dead head revived by RetryDead becomes the head of its key again and
// blocks the rows after it.
func TestRetryDeadRestoresKeyHead(t *testing.T) {
	s := newMemStore()
	a, b := reliar.NewMsg(note{Text: "a"}), reliar.NewMsg(note{Text: "b"})
	a.OrderingKey, b.OrderingKey = "k", "k"
	for _, m := range []reliar.Outgoing{a, b} {
		if _, err := s.Enqueue(t.Context(), m); err != nil {
			t.Fatal(err)
		}
	}
	perKey := func() []outboxdriver.Record {
		t.Helper()
		batch, err := s.Acquire(t.Context(), outboxdriver.AcquireRequest{Worker: "w", BatchSize: 10, Lease: time.Minute, Ordering: outboxdriver.PerKey})
		if err != nil {
			t.Fatal(err)
		}
		return batch.Records
	}
	recs := perKey()
	if len(recs) != 1 || recs[0].Envelope.ID != a.ID {
		t.Fatalf("first claim %v, want a", recs)
	}
	if _, err := s.Fail(t.Context(), []outboxdriver.FailedOutcome{{Lease: recs[0].Lease(), Error: "x", DeadReason: outboxdriver.DeadPermanent}}); err != nil {
		t.Fatal(err)
	}
	recs = perKey()
	if len(recs) != 1 || recs[0].Envelope.ID != b.ID {
		t.Fatalf("claim after a died: %v, want b", recs)
	}
	if _, err := s.Release(t.Context(), []outboxdriver.Lease{recs[0].Lease()}); err != nil {
		t.Fatal(err)
	}
	if n, err := s.RetryDead(t.Context(), []reliar.MessageID{a.ID}); err != nil || n != 1 {
		t.Fatalf("RetryDead = %d, %v", n, err)
	}
	recs = perKey()
	if len(recs) != 1 || recs[0].Envelope.ID != a.ID {
		t.Fatalf("claim after RetryDead: %v, want only the revived head a", recs)
	}
}

// newMemStore returns an empty memstore.Store; memstore.New fails only on an
// invalid option.
func newMemStore(opts ...memstore.Option) *memstore.Store {
	s, err := memstore.New(opts...)
	if err != nil {
		panic(err)
	}
	return s
}
