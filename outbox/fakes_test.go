package outbox_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/outbox/memstore"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// order is the message body used by the dispatcher's tests.
type order struct {
	N int `json:"n"`
}

func (order) MessageType() string { return "orders.placed" }

// call is one store call seen by faultStore.
type call struct {
	op   string
	at   time.Time
	n    int // rows asked for or passed
	done time.Time
}

// faultStore wraps a memstore and lets a test fail, slow or observe any
// call. Hooks run before the call reaches the store; a hook returning an
// error fails the call with it. Hooks that wait must honour ctx.
type faultStore struct {
	*memstore.Store
	mu     sync.Mutex
	calls  []call
	claims []claimSeen
	hooks  map[string]func(ctx context.Context, n int) error
	// claimAfter makes the store report the ClaimAfter capability; the
	// memstore underneath claims from the head whatever After says.
	claimAfter bool
}

// claimSeen is one Acquire seen by faultStore: when, with which After, and
// the position of the last record it returned (nil when none).
type claimSeen struct {
	at          time.Time
	want, got   int
	after, last *outboxdriver.Position
}

func (f *faultStore) Capabilities() outboxdriver.Capabilities {
	c := f.Store.Capabilities()
	c.ClaimAfter = f.claimAfter
	return c
}

func (f *faultStore) claimsSeen() []claimSeen {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]claimSeen(nil), f.claims...)
}

func newFaultStore(opts ...memstore.Option) *faultStore {
	return &faultStore{Store: newMemStore(opts...), hooks: map[string]func(context.Context, int) error{}}
}

func (f *faultStore) hook(op string, h func(ctx context.Context, n int) error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hooks[op] = h
}

func (f *faultStore) before(ctx context.Context, op string, n int) (func(), error) {
	f.mu.Lock()
	f.calls = append(f.calls, call{op: op, at: time.Now(), n: n})
	i := len(f.calls) - 1
	h := f.hooks[op]
	f.mu.Unlock()
	done := func() {
		f.mu.Lock()
		f.calls[i].done = time.Now()
		f.mu.Unlock()
	}
	if h != nil {
		if err := h(ctx, n); err != nil {
			done()
			return nil, err
		}
	}
	return done, nil
}

func (f *faultStore) callsOf(op string) []call {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []call
	for _, c := range f.calls {
		if c.op == op {
			out = append(out, c)
		}
	}
	return out
}

func (f *faultStore) Acquire(ctx context.Context, req outboxdriver.AcquireRequest) (outboxdriver.AcquiredBatch, error) {
	done, err := f.before(ctx, "acquire", req.BatchSize)
	if err != nil {
		return outboxdriver.AcquiredBatch{}, err
	}
	defer done()
	seen := claimSeen{at: time.Now(), want: req.BatchSize, after: req.After}
	b, err := f.Store.Acquire(ctx, req)
	seen.got = b.Len()
	for i := range b.Records {
		if p := b.Records[i].Position(); seen.last == nil || seen.last.Before(p) {
			seen.last = &p
		}
	}
	f.mu.Lock()
	f.claims = append(f.claims, seen)
	f.mu.Unlock()
	return b, err
}

func (f *faultStore) Complete(ctx context.Context, leases []outboxdriver.Lease) (int64, error) {
	done, err := f.before(ctx, "complete", len(leases))
	if err != nil {
		return 0, err
	}
	defer done()
	return f.Store.Complete(ctx, leases)
}

func (f *faultStore) Fail(ctx context.Context, fails []outboxdriver.FailedOutcome) (int64, error) {
	done, err := f.before(ctx, "fail", len(fails))
	if err != nil {
		return 0, err
	}
	defer done()
	return f.Store.Fail(ctx, fails)
}

func (f *faultStore) Release(ctx context.Context, leases []outboxdriver.Lease) (int64, error) {
	done, err := f.before(ctx, "release", len(leases))
	if err != nil {
		return 0, err
	}
	defer done()
	return f.Store.Release(ctx, leases)
}

func (f *faultStore) ExtendLease(ctx context.Context, leases []outboxdriver.Lease, d time.Duration) (int64, error) {
	done, err := f.before(ctx, "extend", len(leases))
	if err != nil {
		return 0, err
	}
	defer done()
	return f.Store.ExtendLease(ctx, leases, d)
}

// hang is a hook that blocks until the call's context ends.
func hang(ctx context.Context, _ int) error {
	<-ctx.Done()
	return ctx.Err()
}

// failTimes fails the first n calls with err and lets the rest through.
func failTimes(n int, err error) func(context.Context, int) error {
	var mu sync.Mutex
	return func(context.Context, int) error {
		mu.Lock()
		defer mu.Unlock()
		if n > 0 {
			n--
			return err
		}
		return nil
	}
}

var errTransient = errors.New("connection reset")

// fakePublisher records deliveries and answers with behave (nil = success).
// It tracks how many publishes run at once.
type fakePublisher struct {
	mu        sync.Mutex
	behave    func(ctx context.Context, env *reliar.SerializedEnvelope) error
	delivered map[reliar.MessageID]int
	order     []reliar.MessageID
	running   int
	peak      int
	calls     int
}

func newFakePublisher(behave func(ctx context.Context, env *reliar.SerializedEnvelope) error) *fakePublisher {
	return &fakePublisher{behave: behave, delivered: map[reliar.MessageID]int{}}
}

func (p *fakePublisher) setBehaviour(b func(ctx context.Context, env *reliar.SerializedEnvelope) error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.behave = b
}

func (p *fakePublisher) Publish(ctx context.Context, env *reliar.SerializedEnvelope) error {
	p.mu.Lock()
	p.running++
	p.calls++
	p.peak = max(p.peak, p.running)
	b := p.behave
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.running--
		p.mu.Unlock()
	}()
	var err error
	if b != nil {
		err = b(ctx, env)
	}
	if err == nil {
		p.mu.Lock()
		p.delivered[env.ID]++
		p.order = append(p.order, env.ID)
		p.mu.Unlock()
	}
	return err
}

func (p *fakePublisher) deliveredCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.delivered)
}

func (p *fakePublisher) peakConcurrency() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.peak
}

// sleepPublish takes d to publish, honouring ctx.
func sleepPublish(d time.Duration) func(context.Context, *reliar.SerializedEnvelope) error {
	return func(ctx context.Context, _ *reliar.SerializedEnvelope) error {
		select {
		case <-time.After(d):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// counts are what countingMetrics saw.
type counts struct {
	dead         map[outbox.DeadReason]int
	retried      int
	abandoned    int
	released     int
	breaker      []bool
	writeFail    int
	shortfall    int
	stats        int
	outsideDedup int
}

// countingMetrics counts what the dispatcher reports.
type countingMetrics struct {
	outbox.NoopMetrics
	mu sync.Mutex
	c  counts
}

func newCountingMetrics() *countingMetrics {
	return &countingMetrics{c: counts{dead: map[outbox.DeadReason]int{}}}
}

func (m *countingMetrics) Dead(r outbox.DeadReason, n int) {
	m.with(func(c *counts) { c.dead[r] += n })
}
func (m *countingMetrics) Retried(reliar.FailureKind) { m.with(func(c *counts) { c.retried++ }) }
func (m *countingMetrics) Abandoned(n int)            { m.with(func(c *counts) { c.abandoned += n }) }
func (m *countingMetrics) ReleasedAtDrain(n int)      { m.with(func(c *counts) { c.released += n }) }
func (m *countingMetrics) BreakerOpen(o bool) {
	m.with(func(c *counts) { c.breaker = append(c.breaker, o) })
}
func (m *countingMetrics) OutcomeWriteFailed(n int) { m.with(func(c *counts) { c.writeFail += n }) }
func (m *countingMetrics) LeaseShortfall(n int)     { m.with(func(c *counts) { c.shortfall += n }) }
func (m *countingMetrics) Stats(outbox.Stats)       { m.with(func(c *counts) { c.stats++ }) }

func (m *countingMetrics) with(f func(c *counts)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f(&m.c)
}

func (m *countingMetrics) snapshot() counts {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.c
	c.dead = map[outbox.DeadReason]int{}
	for k, v := range m.c.dead {
		c.dead[k] = v
	}
	c.breaker = append([]bool(nil), m.c.breaker...)
	return c
}

// testSettings are small, fast settings for the synctest bubble; every
// test states the values it depends on.
func testSettings() outbox.Settings {
	s := outbox.DefaultSettings()
	s.WorkerID = "test"
	s.StatsInterval = outbox.Off
	return s
}

// enqueue commits n orders and returns their ids.
func enqueue(t *testing.T, s *memstore.Store, n int) []reliar.MessageID {
	t.Helper()
	msgs := make([]reliar.Outgoing, n)
	for i := range msgs {
		msgs[i] = reliar.NewMsg(order{N: i})
	}
	ids, err := s.Enqueue(context.Background(), msgs...)
	if err != nil {
		t.Fatalf("enqueue: %v", err)
	}
	return ids
}

// running starts d.Run in a goroutine and returns a stop function that
// cancels it and returns Run's error and how long the shutdown took.
func running(t *testing.T, d *outbox.Dispatcher) (stop func() (error, time.Duration), done <-chan error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan error, 1)
	go func() { ch <- d.Run(ctx) }()
	var once sync.Once
	var err error
	var took time.Duration
	stop = func() (error, time.Duration) {
		once.Do(func() {
			start := time.Now()
			cancel()
			err = <-ch
			took = time.Since(start)
		})
		return err, took
	}
	t.Cleanup(func() { stop() })
	return stop, ch
}

// stateOf reads a row's bookkeeping or fails the test.
func stateOf(t *testing.T, s *memstore.Store, id reliar.MessageID) memstore.RowState {
	t.Helper()
	st, ok := s.Inspect(id)
	if !ok {
		t.Fatalf("row %s not found", id)
	}
	return st
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
