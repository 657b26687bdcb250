package outboxtest_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/outbox/outboxdriver"
	"github.com/reliar/reliar/outbox/outboxtest"
)

type fakeTx struct{ name string }

func TestFakeEnqueuerRecordsCallsWithTheirTransaction(t *testing.T) {
	ctx := context.Background()
	var f outboxtest.FakeEnqueuer[*fakeTx]
	var e outbox.Enqueuer[*fakeTx] = &f
	tx1, tx2 := &fakeTx{"1"}, &fakeTx{"2"}
	msgs := []reliar.Outgoing{{Body: orderPlaced{OrderID: "o-1"}}, reliar.NewMsg(orderCancelled{OrderID: "o-1"})}
	ids, err := e.Enqueue(ctx, tx1, msgs...)
	if err != nil {
		t.Fatal(err)
	}
	if msgs[0].ID != (reliar.MessageID{}) {
		t.Fatal("Enqueue changed the caller's slice")
	}
	if _, err := e.Enqueue(ctx, tx2, reliar.NewMsg(orderPlaced{OrderID: "o-2"})); err != nil {
		t.Fatal(err)
	}
	calls := f.Calls()
	if len(calls) != 2 || calls[0].Tx != tx1 || calls[1].Tx != tx2 || len(calls[0].Messages) != 2 {
		t.Fatalf("calls %+v", calls)
	}
	if calls[0].Messages[0].ID != ids[0] || ids[0] == (reliar.MessageID{}) {
		t.Fatalf("recorded id %s, returned %s", calls[0].Messages[0].ID, ids[0])
	}
	var rt recordTB
	all := outboxtest.RequireManyEnqueued(&rt, f.Enqueued(), []outboxtest.Expected{{Type: "orders.placed"}, {Type: "orders.cancelled"}, {Type: "orders.placed"}})
	rt.passed(t)
	for i, e := range all {
		if e.Sequence != int64(i+1) {
			t.Errorf("message %d has sequence %d", i+1, e.Sequence)
		}
	}
}

func TestFakeEnqueuerRefusesWhatAStoreRefuses(t *testing.T) {
	ctx := context.Background()
	f := outboxtest.FakeEnqueuer[struct{}]{}
	big := reliar.NewMsg(placedAsText{OrderID: strings.Repeat("x", outboxdriver.DefaultMaxPayloadBytes)})
	if _, err := f.Enqueue(ctx, struct{}{}, reliar.NewMsg(orderPlaced{}), big); !errors.Is(err, outboxdriver.ErrPayloadTooLarge) {
		t.Fatalf("err %v, want ErrPayloadTooLarge", err)
	}
	if _, err := f.Enqueue(ctx, struct{}{}, reliar.Outgoing{}); err == nil {
		t.Fatal("a message without a body was accepted")
	}
	boom := errors.New("database down")
	f.Err = boom
	if _, err := f.Enqueue(ctx, struct{}{}, reliar.NewMsg(orderPlaced{})); !errors.Is(err, boom) {
		t.Fatalf("err %v, want %v", err, boom)
	}
	if n := len(f.Enqueued()); n != 0 {
		t.Fatalf("recorded %d messages of failed calls", n)
	}
}

// With a memstore behind it, what the fake recorded can be drained through
// a dispatcher: the ids the code under test got are the ids published.
func TestFakeEnqueuerIntoMemstoreDrains(t *testing.T) {
	ctx := deadline(t)
	f := outboxtest.FakeEnqueuer[struct{}]{Store: newMemstore(t)}
	ids, err := f.Enqueue(ctx, struct{}{}, reliar.NewMsg(orderPlaced{OrderID: "o-1"}), reliar.Outgoing{Body: orderPlaced{OrderID: "o-2"}})
	if err != nil {
		t.Fatal(err)
	}
	var pub outboxtest.RecordingPublisher
	outboxtest.Drain(ctx, t, f.Store, &pub, outbox.Settings{})
	got := map[reliar.MessageID]bool{}
	for _, e := range pub.Published() {
		got[e.ID] = true
	}
	if len(got) != 2 || !got[ids[0]] || !got[ids[1]] {
		t.Fatalf("published %v, want %v", got, ids)
	}
}
