package pgstore

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// slowBatches records the order in which batches are published, each batch
// taking a little time, so that a backlog drains over many claims.
type slowBatches struct {
	mu    sync.Mutex
	order []reliar.MessageID
	total atomic.Int64
}

func (p *slowBatches) Publish(ctx context.Context, env *reliar.SerializedEnvelope) error {
	return p.PublishBatch(ctx, []*reliar.SerializedEnvelope{env})[0]
}

func (p *slowBatches) PublishBatch(_ context.Context, envs []*reliar.SerializedEnvelope) []error {
	time.Sleep(2 * time.Millisecond)
	p.mu.Lock()
	for _, env := range envs {
		p.order = append(p.order, env.ID)
	}
	p.mu.Unlock()
	p.total.Add(int64(len(envs)))
	return make([]error, len(envs))
}

// countingStore counts the claims made After a position.
type countingStore struct {
	*Store
	after atomic.Int64
}

func (c *countingStore) Acquire(ctx context.Context, req outboxdriver.AcquireRequest) (outboxdriver.AcquiredBatch, error) {
	if req.After != nil {
		c.after.Add(1)
	}
	return c.Store.Acquire(ctx, req)
}

// While a backlog drains through claims that start after the last full
// claim, a row written behind their position (here by plain SQL, due an
// hour ago, as a late commit or a released row would be) is published
// within a PollInterval or so, not when the backlog ends.
func TestRowBehindTheClaimPositionIsNotLeftForTheEnd(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := t.Context()
	const backlog = 20000
	if _, err := sharedPool.Exec(ctx, s.n.render(`INSERT INTO {{table}} (id, message_type, payload)
SELECT gen_random_uuid(), 'bulk', '\x7b7d' FROM generate_series(1, $1::int)`), backlog); err != nil {
		t.Fatal(err)
	}
	store := &countingStore{Store: s}
	pub := &slowBatches{}
	settings := outbox.DefaultSettings()
	settings.WorkerID = "after"
	settings.BatchSize, settings.MaxInFlight = 100, 300
	settings.PollInterval = 20 * time.Millisecond
	d, err := outbox.New(store, pub, settings, outbox.WithLogger(quietLogger()))
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- d.Run(runCtx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	waitFor := func(n int64) {
		t.Helper()
		deadline := time.Now().Add(2 * time.Minute)
		for pub.total.Load() < n {
			if time.Now().After(deadline) {
				t.Fatalf("published %d of %d", pub.total.Load(), n)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	waitFor(1000)
	late := reliar.NewMessageID()
	if _, err := sharedPool.Exec(ctx, s.n.render(`INSERT INTO {{table}} (id, message_type, payload, available_at)
VALUES ($1, 'late', '\x7b7d', now() - interval '1 hour')`), late.String()); err != nil {
		t.Fatal(err)
	}
	written := pub.total.Load()
	waitFor(backlog + 1)
	pub.mu.Lock()
	at := slices.Index(pub.order, late)
	pub.mu.Unlock()
	t.Logf("late row published %d rows after it was written, at %d of %d; %d claims After a position", int64(at)-written, at, backlog+1, store.after.Load())
	if store.after.Load() < 20 {
		t.Fatalf("%d claims After a position, want most of the drain's", store.after.Load())
	}
	if at < 0 || at > backlog/2 {
		t.Fatalf("late row published at %d of %d (written after %d): left behind the claims' position", at, backlog+1, written)
	}
}
