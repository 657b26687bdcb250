package pgstore

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// claimCounter counts the rows Acquire returned.
type claimCounter struct {
	*Store
	claimed atomic.Int64
}

func (c *claimCounter) Acquire(ctx context.Context, req outboxdriver.AcquireRequest) (outboxdriver.AcquiredBatch, error) {
	b, err := c.Store.Acquire(ctx, req)
	c.claimed.Add(int64(len(b.Records)))
	return b, err
}

// runDispatcher runs a dispatcher on st publishing to pub until the test
// ends; it returns a function that stops it and checks Run's result.
func runDispatcher(t *testing.T, st outboxdriver.Store, pub reliar.Publisher, tune func(*outbox.Settings)) (stop func()) {
	t.Helper()
	s := outbox.DefaultSettings()
	s.WorkerID = "handoff-test"
	if tune != nil {
		tune(&s)
	}
	d, err := outbox.New(st, pub, s, outbox.WithLogger(quietLogger()))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(t.Context()))
	var wg sync.WaitGroup
	var runErr error
	wg.Go(func() { runErr = d.Run(ctx) })
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			wg.Wait()
			if runErr != nil {
				t.Errorf("Run = %v", runErr)
			}
		})
	}
	t.Cleanup(stop)
	// Wait for the hand-off subscription, which follows the wake-ups'.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if ss, ok := st.(interface{ handoffActive() bool }); ok && ss.handoffActive() {
			return stop
		}
		if time.Now().After(deadline) {
			t.Fatal("the dispatcher never subscribed to hand-offs")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (s *Store) handoffActive() bool { return s.ho.Active() }

func commitOne(t *testing.T, s *Store, m reliar.Outgoing) {
	t.Helper()
	err := pgx.BeginFunc(t.Context(), sharedPool, func(tx pgx.Tx) error {
		_, err := s.Enqueue(t.Context(), tx, m)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func waitPublished(t *testing.T, pub *recorder, want int64) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for pub.total.Load() < want {
		if time.Now().After(deadline) {
			t.Fatalf("published %d of %d", pub.total.Load(), want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// By default, rows committed while the dispatcher runs reach the
// publisher without any claim: leased at enqueue, handed over on the
// notification that proves the commit. Each counts one claim and no lapse.
func TestHandoffPublishesWithoutClaim(t *testing.T) {
	s := newStore(t)
	cc := &claimCounter{Store: s}
	pub := newRecorder()
	runDispatcher(t, cc, pub, nil)
	const n = 40
	ids := make([]reliar.MessageID, 0, n)
	for i := range n {
		m := reliar.NewMsg(orderPlaced{OrderID: itoa(i)})
		commitOne(t, s, m)
		ids = append(ids, m.ID)
	}
	waitPublished(t, pub, n)
	if c := cc.claimed.Load(); c != 0 {
		t.Errorf("Acquire returned %d rows, want 0: every row should be handed over", c)
	}
	// The outcome writes follow the publishes: wait for them to land.
	var published, claims, lapsed int
	read := func() {
		t.Helper()
		err := sharedPool.QueryRow(t.Context(), s.n.render(`SELECT count(*) FILTER (WHERE published_at IS NOT NULL),
		coalesce(sum(claim_count), 0), coalesce(sum(lapsed_claims), 0) FROM {{table}} WHERE id = ANY($1)`), ids).Scan(&published, &claims, &lapsed)
		if err != nil {
			t.Fatal(err)
		}
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if read(); published == n || time.Now().After(deadline) {
			break
		}
	}
	if published != n || claims != n || lapsed != 0 {
		t.Errorf("published %d, claims %d, lapsed %d; want %d, %d, 0", published, claims, lapsed, n, n)
	}
	pub.mu.Lock()
	defer pub.mu.Unlock()
	for _, id := range ids {
		if c := pub.counts[id]; c != 1 {
			t.Errorf("%s published %d times", id, c)
		}
	}
}

// A rolled-back enqueue sends no proof: its rows vanish with the
// transaction and nothing is handed over or published.
func TestHandoffRolledBackIsNeverPublished(t *testing.T) {
	s := newStore(t)
	pub := newRecorder()
	runDispatcher(t, s, pub, nil)
	gone := reliar.NewMsg(orderPlaced{OrderID: "rolled-back"})
	tx, err := sharedPool.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Enqueue(t.Context(), tx, gone); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(t.Context()); err != nil {
		t.Fatal(err)
	}
	kept := reliar.NewMsg(orderPlaced{OrderID: "committed"})
	commitOne(t, s, kept)
	waitPublished(t, pub, 1)
	time.Sleep(100 * time.Millisecond)
	pub.mu.Lock()
	defer pub.mu.Unlock()
	if pub.counts[gone.ID] != 0 || pub.counts[kept.ID] != 1 {
		t.Fatalf("published: rolled back %d times, committed %d times", pub.counts[gone.ID], pub.counts[kept.ID])
	}
}

// Rows leased at enqueue whose hand-off never comes (here: a subscriber
// that never reads, as a producer that died before the proof arrived) are
// claimed by a dispatcher once their lease lapses, as a lapsed claim.
func TestHandoffNeverHandedOverComesBackAfterLease(t *testing.T) {
	producer := newStore(t)
	ctx, cancel := context.WithCancel(t.Context())
	var reserved atomic.Int64
	_, err := producer.Handoff(ctx, outboxdriver.HandoffRequest{
		Worker: "gone", Lease: 500 * time.Millisecond, MinLeft: 100 * time.Millisecond,
		Reserve: func(n int) bool { reserved.Add(int64(n)); return true }, Unreserve: func(n int) { reserved.Add(-int64(n)) },
	})
	if err != nil {
		t.Fatal(err)
	}
	m := reliar.NewMsg(orderPlaced{OrderID: "orphan"})
	start := time.Now()
	commitOne(t, producer, m)
	cancel() // the producer's dispatcher is gone before any proof
	var lockedBy string
	var left time.Duration
	err = sharedPool.QueryRow(t.Context(), producer.n.render(`SELECT locked_by,
		(extract(epoch FROM locked_until - clock_timestamp()) * 1e6)::int8 * interval '1 microsecond' FROM {{table}} WHERE id = $1`), m.ID).Scan(&lockedBy, &left)
	if err != nil {
		t.Fatal(err)
	}
	if lockedBy != "gone" || left <= 0 || left > 500*time.Millisecond {
		t.Fatalf("row leased to %q with %v left; want gone, within 500ms", lockedBy, left)
	}

	// Another store value on the same table: the relay that finds the row.
	relay, err := New(t.Context(), sharedPool, WithSchema(producer.Schema()), WithLogger(quietLogger()))
	if err != nil {
		t.Fatal(err)
	}
	pub := newRecorder()
	d, err := outbox.New(relay, pub, func() outbox.Settings {
		s := outbox.DefaultSettings()
		s.PollInterval, s.IdlePollInterval = 50*time.Millisecond, 50*time.Millisecond
		return s
	}(), outbox.WithLogger(quietLogger()))
	if err != nil {
		t.Fatal(err)
	}
	rctx, rcancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Go(func() { _ = d.Run(rctx) })
	defer func() { rcancel(); wg.Wait() }()
	waitPublished(t, pub, 1)
	if since := time.Since(start); since < 400*time.Millisecond {
		t.Errorf("published after %v, before the lease lapsed", since)
	}
	var lapsed int
	if err := sharedPool.QueryRow(t.Context(), producer.n.render(`SELECT lapsed_claims FROM {{table}} WHERE id = $1`), m.ID).Scan(&lapsed); err != nil {
		t.Fatal(err)
	}
	if lapsed != 1 {
		t.Errorf("lapsed_claims = %d, want 1", lapsed)
	}
}

// Only rows without an ordering key, a delay, an expiry (and a tenant,
// unless allowed) are leased at enqueue; the others are claimed as usual.
func TestHandoffEligibility(t *testing.T) {
	s := newStore(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	_, err := s.Handoff(ctx, outboxdriver.HandoffRequest{
		Worker: "w", Lease: time.Minute, MinLeft: time.Second,
		Reserve: func(int) bool { return true }, Unreserve: func(int) {},
	})
	if err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Hour)
	tests := []struct {
		name   string
		edit   func(*reliar.Outgoing)
		leased bool
	}{
		{"plain", func(*reliar.Outgoing) {}, true},
		{"ordering key", func(o *reliar.Outgoing) { o.OrderingKey = "k" }, false},
		{"available later", func(o *reliar.Outgoing) { o.AvailableAt = later }, false},
		{"expires", func(o *reliar.Outgoing) { o.Metadata.Delivery.ExpiresAt = &later }, false},
		{"tenant", func(o *reliar.Outgoing) { o.Metadata.TenantID = "acme" }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := reliar.NewMsg(orderPlaced{OrderID: tt.name})
			tt.edit(&m)
			commitOne(t, s, m)
			var leased bool
			if err := sharedPool.QueryRow(t.Context(), s.n.render(`SELECT locked_by IS NOT NULL FROM {{table}} WHERE id = $1`), m.ID).Scan(&leased); err != nil {
				t.Fatal(err)
			}
			if leased != tt.leased {
				t.Errorf("leased at enqueue = %v, want %v", leased, tt.leased)
			}
		})
	}
}

// A dispatcher without room (MaxInFlight taken) gets no row leased at
// enqueue: Reserve refuses, and the row is enqueued as usual.
func TestHandoffWithoutRoomEnqueuesAsUsual(t *testing.T) {
	s := newStore(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	if _, err := s.Handoff(ctx, outboxdriver.HandoffRequest{
		Worker: "w", Lease: time.Minute, MinLeft: time.Second,
		Reserve: func(int) bool { return false }, Unreserve: func(int) {},
	}); err != nil {
		t.Fatal(err)
	}
	m := reliar.NewMsg(orderPlaced{OrderID: "full"})
	commitOne(t, s, m)
	var leased bool
	if err := sharedPool.QueryRow(t.Context(), s.n.render(`SELECT locked_by IS NOT NULL FROM {{table}} WHERE id = $1`), m.ID).Scan(&leased); err != nil {
		t.Fatal(err)
	}
	if leased {
		t.Error("row leased at enqueue although Reserve refused")
	}
}

func TestHandoffSubscriptionRules(t *testing.T) {
	req := outboxdriver.HandoffRequest{Worker: "w", Lease: time.Minute, Reserve: func(int) bool { return true }, Unreserve: func(int) {}}
	for name, opt := range map[string]Option{"WithoutHandoff": WithoutHandoff(), "WithoutNotify": WithoutNotify()} {
		off := newStore(t, opt)
		if _, err := off.Handoff(t.Context(), req); err == nil {
			t.Errorf("Handoff with %s succeeded", name)
		}
		if off.Capabilities().Handoff {
			t.Errorf("Capabilities.Handoff with %s", name)
		}
	}
	s := newStore(t)
	if !s.Capabilities().Handoff {
		t.Error("Capabilities.Handoff is false by default")
	}
	ctx, cancel := context.WithCancel(t.Context())
	ch, err := s.Handoff(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Handoff(t.Context(), req); !errors.Is(err, outboxdriver.ErrHandoffTaken) {
		t.Errorf("second subscription: err = %v, want ErrHandoffTaken", err)
	}
	cancel()
	select {
	case _, ok := <-ch:
		if ok {
			t.Error("a hand-off arrived on an idle subscription")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the channel was not closed after ctx ended")
	}
	ctx2, cancel2 := context.WithCancel(t.Context())
	defer cancel2()
	if _, err := s.Handoff(ctx2, req); err != nil {
		t.Errorf("subscription after the first ended: %v", err)
	}
}

// blockingPublisher holds every publish until release is closed.
type blockingPublisher struct {
	started chan reliar.MessageID
	release chan struct{}
}

func (p *blockingPublisher) Publish(ctx context.Context, env *reliar.SerializedEnvelope) error {
	p.started <- env.ID
	select {
	case <-p.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func leasedRows(t *testing.T, s *Store) int {
	t.Helper()
	var n int
	if err := sharedPool.QueryRow(t.Context(), s.n.render(`SELECT count(*) FROM {{table}} WHERE locked_by IS NOT NULL`)).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// Rows leased at enqueue count toward MaxInFlight: with two rows held, the
// next commits are enqueued as usual, not leased; and the rows handed over
// are released, not left to their lease, when the dispatcher stops.
func TestHandoffCountsTowardMaxInFlightAndIsReleasedAtShutdown(t *testing.T) {
	s := newStore(t)
	pub := &blockingPublisher{started: make(chan reliar.MessageID, 16), release: make(chan struct{})}
	stop := runDispatcher(t, s, pub, func(st *outbox.Settings) {
		st.BatchSize, st.MaxInFlight = 2, 2
		st.PublishTimeout, st.DrainTimeout, st.StoreTimeout = 5*time.Second, 2*time.Second, time.Second
	})
	for i := range 5 {
		commitOne(t, s, reliar.NewMsg(orderPlaced{OrderID: itoa(i)}))
	}
	for range 2 {
		select {
		case <-pub.started:
		case <-time.After(10 * time.Second):
			t.Fatal("the dispatcher published fewer than two rows")
		}
	}
	if n := leasedRows(t, s); n != 2 {
		t.Fatalf("%d rows leased with MaxInFlight 2", n)
	}
	stop()
	if n := leasedRows(t, s); n != 0 {
		t.Errorf("%d rows still leased after the dispatcher stopped; want them released", n)
	}
}

// A rolled-back enqueue never proves its commit: its reservation ends after
// HandoffReserveFor instead of holding the dispatcher's room for a lease.
// With MaxInFlight 2 and two rolled-back enqueues, a later commit is still
// published at once.
func TestHandoffRolledBackReservationFreesRoom(t *testing.T) {
	s := newStore(t)
	pub := newRecorder()
	runDispatcher(t, s, pub, func(st *outbox.Settings) { st.BatchSize, st.MaxInFlight = 2, 2 })
	for range 2 {
		tx, err := sharedPool.Begin(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Enqueue(t.Context(), tx, reliar.NewMsg(orderPlaced{OrderID: "rolled-back"})); err != nil {
			t.Fatal(err)
		}
		if err := tx.Rollback(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	commitOne(t, s, reliar.NewMsg(orderPlaced{OrderID: "kept"}))
	waitPublished(t, pub, 1)
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("published after %v: the rolled-back reservations held the room", took)
	}
}

// A producer in another language inserts plain rows (id, message_type,
// payload) and the notify trigger wakes the dispatcher with an empty
// payload: the rows are not leased at enqueue, and the dispatcher, which
// takes the hand-offs of this process's Enqueue, claims them as usual.
func TestHandoffLeavesOtherProducersRowsToClaims(t *testing.T) {
	s := newStore(t)
	if err := EnableNotifyTrigger(t.Context(), sharedPool, WithSchema(s.Schema())); err != nil {
		t.Fatal(err)
	}
	cc := &claimCounter{Store: s}
	pub := newRecorder()
	runDispatcher(t, cc, pub, nil)
	commitOne(t, s, reliar.NewMsg(orderPlaced{OrderID: "ours"}))
	raw := reliar.NewMessageID()
	if _, err := sharedPool.Exec(t.Context(), s.n.render(`INSERT INTO {{table}} (id, message_type, payload)
		VALUES ($1, 'orders.placed', convert_to('{"order_id":"theirs"}', 'UTF8'))`), raw); err != nil {
		t.Fatal(err)
	}
	waitPublished(t, pub, 2)
	if c := cc.claimed.Load(); c != 1 {
		t.Errorf("Acquire returned %d rows, want 1 (the plain row)", c)
	}
	pub.mu.Lock()
	defer pub.mu.Unlock()
	if pub.counts[raw] != 1 {
		t.Errorf("the plain row was published %d times", pub.counts[raw])
	}
}
