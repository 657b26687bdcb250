package pgstore

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// timedStore records when each claim started and ended and which rows it
// returned; Wakeups and the rest are the embedded store's.
type timedStore struct {
	*Store
	mu     sync.Mutex
	claims map[reliar.MessageID][2]time.Time
}

func (s *timedStore) Acquire(ctx context.Context, req outboxdriver.AcquireRequest) (outboxdriver.AcquiredBatch, error) {
	start := time.Now()
	b, err := s.Store.Acquire(ctx, req)
	end := time.Now()
	s.mu.Lock()
	for _, r := range b.Records {
		s.claims[r.Envelope.ID] = [2]time.Time{start, end}
	}
	s.mu.Unlock()
	return b, err
}

// timedPublisher records when each message was published.
type timedPublisher struct {
	mu sync.Mutex
	at map[reliar.MessageID]time.Time
}

func (p *timedPublisher) Publish(_ context.Context, env *reliar.SerializedEnvelope) error {
	p.mu.Lock()
	p.at[env.ID] = time.Now()
	p.mu.Unlock()
	return nil
}

// BenchmarkIdleLatency splits the idle latency (1,000 single-message
// transactions at 200/s, a dispatcher at default settings) into its parts:
// from the producer's Commit returning to the start of the claim that
// returned the row (wait), the claim itself, and from the claim's end to
// the publish (handoff). The commit=* cases claim every row
// (WithoutHandoff); the handoff case is the default, where rows are handed
// over at commit and only total is reported for them. Run it with
// -benchtime 1x; every iteration is one full run.
func BenchmarkIdleLatency(b *testing.B) {
	for _, tc := range []struct {
		name string
		opts []Option
	}{
		{"commit=sync", []Option{WithoutHandoff()}},
		{"commit=async", []Option{WithoutHandoff(), WithAsyncCommit()}},
		{"handoff", nil},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				idleLatencyRun(b, tc.opts)
			}
		})
	}
}

func idleLatencyRun(b *testing.B, opts []Option) {
	const (
		messages = 1000
		interval = 5 * time.Millisecond
	)
	pool, _ := dedicatedPool(b, 10)
	s := newStoreOn(b, pool, opts...)
	ts := &timedStore{Store: s, claims: map[reliar.MessageID][2]time.Time{}}
	pub := &timedPublisher{at: map[reliar.MessageID]time.Time{}}
	d, err := outbox.New(ts, pub, outbox.DefaultSettings(), outbox.WithLogger(quietLogger()))
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(b.Context())
	var wg sync.WaitGroup
	var runErr error
	wg.Go(func() { runErr = d.Run(ctx) })
	defer func() {
		cancel()
		wg.Wait()
		if runErr != nil {
			b.Errorf("Run = %v", runErr)
		}
	}()
	committed := make(map[reliar.MessageID]time.Time, messages)
	start := time.Now()
	for i := range messages {
		time.Sleep(time.Until(start.Add(time.Duration(i) * interval)))
		m := reliar.NewMsg(orderPlaced{OrderID: "o-1"})
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			_, err := s.Enqueue(ctx, tx, m)
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
		committed[m.ID] = time.Now()
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		pub.mu.Lock()
		n := len(pub.at)
		pub.mu.Unlock()
		if n >= messages {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("published %d of %d", n, messages)
		}
		time.Sleep(10 * time.Millisecond)
	}
	pub.mu.Lock()
	ts.mu.Lock()
	var total, wait, claim, handoff []time.Duration
	for id, c := range committed {
		cl, claimed := ts.claims[id]
		p := pub.at[id]
		total = append(total, p.Sub(c))
		if !claimed {
			continue // handed over at commit, never claimed
		}
		wait = append(wait, max(cl[0].Sub(c), 0))
		claim = append(claim, cl[1].Sub(cl[0]))
		handoff = append(handoff, p.Sub(cl[1]))
	}
	ts.mu.Unlock()
	pub.mu.Unlock()
	for _, m := range []struct {
		name string
		d    []time.Duration
	}{{"total", total}, {"wait", wait}, {"claim", claim}, {"handoff", handoff}} {
		if len(m.d) == 0 {
			continue
		}
		slices.Sort(m.d)
		b.ReportMetric(millis(m.d[len(m.d)/2]), m.name+"-p50-ms")
		b.ReportMetric(millis(m.d[len(m.d)*99/100]), m.name+"-p99-ms")
	}
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
