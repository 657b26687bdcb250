package pgstore

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
	"github.com/reliar/reliar/outbox/storetest"
)

// The whole contract holds when claims and outcomes commit asynchronously,
// also with a statement timeout sharing the prelude.
func TestStoreConformanceAsyncCommit(t *testing.T) {
	t.Parallel()
	storetest.Run(t, harnessWith(WithAsyncCommit(), WithStatementTimeout(30*time.Second)))
}

// Asynchronous commit applies to the dispatch transactions only, and only
// with WithAsyncCommit; the statement timeout applies to every transaction
// of the store's own.
func TestAsyncCommitScope(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		opts        []Option
		kind        txKind
		wantCommit  string
		wantTimeout string
	}{
		{"default dispatch", nil, dispatchTx, "on", "0"},
		{"default admin", nil, adminTx, "on", "0"},
		{"async dispatch", []Option{WithAsyncCommit()}, dispatchTx, "off", "0"},
		{"async admin", []Option{WithAsyncCommit()}, adminTx, "on", "0"},
		{"async and timeout, dispatch", []Option{WithAsyncCommit(), WithStatementTimeout(7 * time.Second)}, dispatchTx, "off", "7s"},
		{"async and timeout, admin", []Option{WithAsyncCommit(), WithStatementTimeout(7 * time.Second)}, adminTx, "on", "7s"},
		{"timeout only", []Option{WithStatementTimeout(3 * time.Second)}, dispatchTx, "on", "3s"},
	}
	// One connection, so that the check after each batch reads the
	// session the batch ran on.
	pool, _ := dedicatedPool(t, 1)
	s := newStoreOn(t, pool)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := New(t.Context(), pool, append([]Option{WithSchema(s.Schema()), WithLogger(quietLogger())}, tt.opts...)...)
			if err != nil {
				t.Fatal(err)
			}
			b := st.newBatch(tt.kind)
			b.Queue("SELECT current_setting('synchronous_commit'), current_setting('statement_timeout')")
			var commit, timeout string
			err = st.send(t.Context(), b, func(br pgx.BatchResults) error {
				return br.QueryRow().Scan(&commit, &timeout)
			})
			if err != nil {
				t.Fatal(err)
			}
			if commit != tt.wantCommit || timeout != tt.wantTimeout {
				t.Errorf("synchronous_commit = %s, statement_timeout = %s; want %s, %s", commit, timeout, tt.wantCommit, tt.wantTimeout)
			}
			// SET LOCAL ended with the batch: the session is back to its
			// defaults.
			var after string
			if err := pool.QueryRow(t.Context(), "SELECT current_setting('synchronous_commit')").Scan(&after); err != nil || after != "on" {
				t.Errorf("synchronous_commit after the batch = %q, %v", after, err)
			}
		})
	}
}

// Enqueue runs in the caller's transaction and never changes its commit
// mode, whatever the store's options.
func TestAsyncCommitLeavesEnqueueSynchronous(t *testing.T) {
	t.Parallel()
	s := newStore(t, WithAsyncCommit())
	err := pgx.BeginFunc(t.Context(), sharedPool, func(tx pgx.Tx) error {
		if _, err := s.Enqueue(t.Context(), tx, reliar.NewMsg(orderPlaced{"o-1"})); err != nil {
			return err
		}
		var mode string
		if err := tx.QueryRow(t.Context(), "SELECT current_setting('synchronous_commit')").Scan(&mode); err != nil {
			return err
		}
		if mode != "on" {
			t.Errorf("synchronous_commit in the caller's transaction = %s", mode)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// With WithDeleteOnComplete, Complete deletes the row (fenced by its lease
// token like every outcome), and Stats, the dead letters and Purge see
// the same table as without it, minus the published rows.
func TestDeleteOnComplete(t *testing.T) {
	t.Parallel()
	s := newStore(t, WithDeleteOnComplete())
	ctx := t.Context()
	enqueue(t, s, reliar.NewMsg(orderPlaced{"o-1"}), reliar.NewMsg(orderPlaced{"o-2"}), reliar.NewMsg(orderPlaced{"o-3"}))
	batch, err := s.Acquire(ctx, outboxdriver.AcquireRequest{Worker: "w", BatchSize: 3, Lease: time.Minute})
	if err != nil || len(batch.Records) != 3 {
		t.Fatalf("claim = %+v, %v", batch, err)
	}
	done, dead, stale := batch.Records[0].Lease(), batch.Records[1].Lease(), batch.Records[2].Lease()
	stale.Token = reliar.NewMessageID()
	if n, err := s.Complete(ctx, []outboxdriver.Lease{done, stale}); err != nil || n != 1 {
		t.Fatalf("Complete = %d, %v; want 1 (the stale lease matches nothing)", n, err)
	}
	if n, err := s.Complete(ctx, []outboxdriver.Lease{done}); err != nil || n != 0 {
		t.Fatalf("Complete again = %d, %v; want 0", n, err)
	}
	if n, err := s.Fail(ctx, []outboxdriver.FailedOutcome{{Lease: dead, Error: "no", DeadReason: outboxdriver.DeadPermanent}}); err != nil || n != 1 {
		t.Fatalf("Fail = %d, %v", n, err)
	}
	if got := countRows(t, s, "true"); got != 2 {
		t.Fatalf("%d rows left, want 2 (one dead, one still leased)", got)
	}
	if got := countRows(t, s, "id = '"+done.ID.String()+"'"); got != 0 {
		t.Fatal("the completed row is still there")
	}
	st, err := s.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Pending != 1 || st.Leased != 1 || st.Dead != 1 {
		t.Errorf("Stats = %+v, want 1 pending (leased) and 1 dead", st)
	}
	page, err := s.ListDead(ctx, outboxdriver.DeadQuery{})
	if err != nil || len(page.Records) != 1 || page.Records[0].Envelope.ID != dead.ID {
		t.Fatalf("ListDead = %+v, %v", page, err)
	}
	zero := time.Duration(0)
	report, err := s.Purge(ctx, outboxdriver.PurgeRequest{PublishedRetention: &zero})
	if err != nil || report != (outboxdriver.PurgeReport{}) {
		t.Fatalf("Purge = %+v, %v; want nothing to do", report, err)
	}
}
