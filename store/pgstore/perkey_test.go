package pgstore

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// keyStep is one move of two overlapping producer transactions, "a" and
// "b", that write rows of the same ordering key.
type keyStep struct {
	op   string   // xid, enqueue, commit, settle or claim
	tx   string   // the transaction of xid, enqueue, commit and settle
	want []string // claim: the transactions whose rows the claim returns
}

func xid(tx string) keyStep        { return keyStep{op: "xid", tx: tx} }
func write(tx string) keyStep      { return keyStep{op: "enqueue", tx: tx} }
func commit(tx string) keyStep     { return keyStep{op: "commit", tx: tx} }
func settle(tx string) keyStep     { return keyStep{op: "settle", tx: tx} }
func claim(want ...string) keyStep { return keyStep{op: "claim", want: want} }

// The per-key claim orders a key's rows by sequence among rows whose
// transaction id is below the cluster's snapshot xmin. These cases pin down
// what that means when two producers' transactions overlap, each taking its
// transaction id explicitly (as a business write before the enqueue would)
// so that the order of ids and the order of inserts can disagree.
//
// Ordering the head by (xid, sequence) instead would not change the first
// case (b still goes first) and fails the second and the fourth (b's row
// comes first in both): in the second b writes only after a committed, a
// causal order that (xid, sequence) reverses.
func TestPerKeyOrderOfOverlappingTransactions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		steps []keyStep
	}{
		{
			// The gap: a inserted first (lower sequence) but b's row is
			// published first, because b's id is below the xmin while a is
			// still open. That is commit order, and a and b were concurrent.
			name: "the later id writes first and commits last: commit order",
			steps: []keyStep{xid("b"), xid("a"), write("a"), write("b"), commit("b"), settle("b"),
				claim("b"), claim(), commit("a"), settle("a"), claim("a")},
		},
		{
			name: "a writer that waited for the other's commit comes after it: causal order",
			steps: []keyStep{xid("b"), xid("a"), write("a"), commit("a"), write("b"), commit("b"),
				settle("a"), settle("b"), claim("a"), claim("b")},
		},
		{
			name: "the earlier id writes first and commits last: held back, then sequence order",
			steps: []keyStep{xid("a"), xid("b"), write("a"), write("b"), commit("b"),
				claim(), commit("a"), settle("a"), settle("b"), claim("a"), claim("b")},
		},
		{
			name: "both committed before the claim: sequence order",
			steps: []keyStep{xid("b"), xid("a"), write("a"), write("b"), commit("b"), commit("a"),
				settle("a"), settle("b"), claim("a"), claim("b")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			runKeySteps(t, newStore(t), tt.steps)
		})
	}
}

func runKeySteps(t *testing.T, s *Store, steps []keyStep) {
	ctx := t.Context()
	txs := map[string]pgx.Tx{}
	xids := map[string]string{}
	owner := map[reliar.MessageID]string{}
	for _, name := range []string{"a", "b"} {
		tx, err := sharedPool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = tx.Rollback(context.WithoutCancel(ctx)) })
		txs[name] = tx
	}
	for i, st := range steps {
		switch st.op {
		case "xid":
			var x string
			if err := txs[st.tx].QueryRow(ctx, "SELECT pg_current_xact_id()::text").Scan(&x); err != nil {
				t.Fatalf("step %d: %v", i, err)
			}
			xids[st.tx] = x
		case "enqueue":
			m := reliar.NewMsg(orderPlaced{OrderID: st.tx})
			m.OrderingKey = "customer-1"
			if _, err := s.Enqueue(ctx, txs[st.tx], m); err != nil {
				t.Fatalf("step %d: enqueue in %s: %v", i, st.tx, err)
			}
			owner[m.ID] = st.tx
		case "commit":
			if err := txs[st.tx].Commit(ctx); err != nil {
				t.Fatalf("step %d: commit %s: %v", i, st.tx, err)
			}
		case "settle":
			if err := awaitSettled(ctx, xids[st.tx]); err != nil {
				t.Fatalf("step %d: %v", i, err)
			}
		case "claim":
			batch, err := s.Acquire(ctx, outboxdriver.AcquireRequest{Worker: "w", BatchSize: 10, Lease: time.Minute, Ordering: outboxdriver.PerKey})
			if err != nil {
				t.Fatalf("step %d: claim: %v", i, err)
			}
			got := []string{}
			var leases []outboxdriver.Lease
			for _, r := range batch.Records {
				got = append(got, owner[r.Envelope.ID])
				leases = append(leases, r.Lease())
			}
			if want := append([]string{}, st.want...); !slices.Equal(got, want) {
				t.Fatalf("step %d: claimed the rows of %v, want %v", i, got, want)
			}
			if _, err := s.Complete(ctx, leases); err != nil {
				t.Fatalf("step %d: complete: %v", i, err)
			}
		default:
			t.Fatalf("step %d: unknown op %q", i, st.op)
		}
	}
}
