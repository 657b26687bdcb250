package sqlitestore_test

import (
	"context"
	"database/sql"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/outbox/outboxdriver"
	"github.com/reliar/reliar/store/sqlitestore"
)

type handoffMsg struct{ N int }

func (handoffMsg) MessageType() string { return "handoff.test" }

// claimCounter counts the rows Acquire returned.
type claimCounter struct {
	*sqlitestore.Store
	claimed atomic.Int64
}

func (c *claimCounter) Acquire(ctx context.Context, req outboxdriver.AcquireRequest) (outboxdriver.AcquiredBatch, error) {
	b, err := c.Store.Acquire(ctx, req)
	c.claimed.Add(int64(len(b.Records)))
	return b, err
}

// countingPublisher counts publishes per message.
type countingPublisher struct {
	mu    sync.Mutex
	count map[reliar.MessageID]int
	total atomic.Int64
}

func (p *countingPublisher) Publish(_ context.Context, env *reliar.SerializedEnvelope) error {
	p.mu.Lock()
	p.count[env.ID]++
	p.mu.Unlock()
	p.total.Add(1)
	return nil
}

func (p *countingPublisher) waitFor(t *testing.T, n int64) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for p.total.Load() < n {
		if time.Now().After(deadline) {
			t.Fatalf("published %d of %d", p.total.Load(), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func runDispatcher(t *testing.T, st outboxdriver.Store, pub reliar.Publisher, tune func(*outbox.Settings)) {
	t.Helper()
	s := outbox.DefaultSettings()
	if tune != nil {
		tune(&s)
	}
	d, err := outbox.New(st, pub, s)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(t.Context()))
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := d.Run(ctx); err != nil {
			t.Errorf("Run = %v", err)
		}
	})
	t.Cleanup(func() { cancel(); wg.Wait() })
}

func commit(t *testing.T, db *sql.DB, s *sqlitestore.Store, m reliar.Outgoing, rollback bool) {
	t.Helper()
	tx, err := db.BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Enqueue(t.Context(), tx, m); err != nil {
		t.Fatal(err)
	}
	if rollback {
		err = tx.Rollback()
	} else {
		err = tx.Commit()
	}
	if err != nil {
		t.Fatal(err)
	}
}

// Rows committed while the dispatcher runs in the process are leased at
// enqueue and handed over by the wake-up watcher once it reads them: no
// claim returns them, and a rolled-back enqueue is never published.
func TestHandoffPublishesWithoutClaim(t *testing.T) {
	db, _ := newDB(t)
	s, err := sqlitestore.New(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Capabilities().Handoff {
		t.Fatal("Capabilities.Handoff is false by default")
	}
	cc := &claimCounter{Store: s}
	pub := &countingPublisher{count: map[reliar.MessageID]int{}}
	runDispatcher(t, cc, pub, nil)
	// The first message may be claimed: the subscription follows Run's start.
	commit(t, db, s, reliar.NewMsg(handoffMsg{N: -1}), false)
	pub.waitFor(t, 1)
	before := cc.claimed.Load()
	const n = 30
	gone := reliar.NewMsg(handoffMsg{N: -2})
	commit(t, db, s, gone, true)
	ids := make([]reliar.MessageID, n)
	for i := range n {
		m := reliar.NewMsg(handoffMsg{N: i})
		ids[i] = m.ID
		commit(t, db, s, m, false)
	}
	pub.waitFor(t, n+1)
	if c := cc.claimed.Load() - before; c != 0 {
		t.Errorf("Acquire returned %d rows, want 0: every row should be handed over", c)
	}
	time.Sleep(50 * time.Millisecond)
	pub.mu.Lock()
	defer pub.mu.Unlock()
	if pub.count[gone.ID] != 0 {
		t.Error("a rolled-back message was published")
	}
	for _, id := range ids {
		if pub.count[id] != 1 {
			t.Errorf("%s published %d times", id, pub.count[id])
		}
	}
}

// A row leased at enqueue whose hand-off never comes (its dispatcher gone
// before the proof) is claimed by another dispatcher once its lease lapses,
// as a lapsed claim.
func TestHandoffNeverHandedOverComesBackAfterLease(t *testing.T) {
	db, _ := newDB(t)
	producer, err := sqlitestore.New(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	if _, err := producer.Handoff(ctx, outboxdriver.HandoffRequest{
		Worker: "gone", Lease: 500 * time.Millisecond, MinLeft: 100 * time.Millisecond,
		Reserve: func(int) bool { return true }, Unreserve: func(int) {},
	}); err != nil {
		t.Fatal(err)
	}
	m := reliar.NewMsg(handoffMsg{})
	start := time.Now()
	commit(t, db, producer, m, false)
	cancel()
	var lockedBy string
	if err := db.QueryRowContext(t.Context(), `SELECT locked_by FROM outbox WHERE id = ?`, m.ID.String()).Scan(&lockedBy); err != nil {
		t.Fatal(err)
	}
	if lockedBy != "gone" {
		t.Fatalf("locked_by = %q, want gone", lockedBy)
	}
	relay, err := sqlitestore.New(t.Context(), db, sqlitestore.WithoutHandoff())
	if err != nil {
		t.Fatal(err)
	}
	pub := &countingPublisher{count: map[reliar.MessageID]int{}}
	runDispatcher(t, relay, pub, func(s *outbox.Settings) {
		s.PollInterval, s.IdlePollInterval = 50*time.Millisecond, 50*time.Millisecond
	})
	pub.waitFor(t, 1)
	if since := time.Since(start); since < 400*time.Millisecond {
		t.Errorf("published after %v, before the lease lapsed", since)
	}
	var lapsed int
	if err := db.QueryRowContext(t.Context(), `SELECT lapsed_claims FROM outbox WHERE id = ?`, m.ID.String()).Scan(&lapsed); err != nil {
		t.Fatal(err)
	}
	if lapsed != 1 {
		t.Errorf("lapsed_claims = %d, want 1", lapsed)
	}
	if relay.Capabilities().Handoff {
		t.Error("Capabilities.Handoff with WithoutHandoff")
	}
	if _, err := relay.Handoff(t.Context(), outboxdriver.HandoffRequest{Worker: "w", Lease: time.Second,
		Reserve: func(int) bool { return true }, Unreserve: func(int) {}}); err == nil {
		t.Error("Handoff with WithoutHandoff succeeded")
	}
}
