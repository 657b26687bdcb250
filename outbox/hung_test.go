package outbox_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox"
)

// waitFor polls cond every 10ms of the bubble's clock, for at most limit,
// and fails the test if it never holds.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(limit); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("%s: not within %v", what, limit)
		}
	}
}

// gate blocks the calls that pass through it, whatever their context says,
// until it is opened; it stands for a publisher or a driver that ignores its
// context.
type gate struct {
	once sync.Once
	ch   chan struct{}
}

func newGate() *gate { return &gate{ch: make(chan struct{})} }

func (g *gate) wait()  { <-g.ch }
func (g *gate) open()  { g.once.Do(func() { close(g.ch) }) }
func (g *gate) close() { g.open() }

// givenUpMetrics counts the calls the dispatcher stopped waiting for.
type givenUpMetrics struct {
	*countingMetrics
	mu      sync.Mutex
	givenUp map[string]int
	invalid int
}

func newGivenUpMetrics() *givenUpMetrics {
	return &givenUpMetrics{countingMetrics: newCountingMetrics(), givenUp: map[string]int{}}
}

func (m *givenUpMetrics) CallGivenUp(call string) {
	m.mu.Lock()
	m.givenUp[call]++
	m.mu.Unlock()
}

func (m *givenUpMetrics) InvalidBatchResults(int) {
	m.mu.Lock()
	m.invalid++
	m.mu.Unlock()
}

func (m *givenUpMetrics) snapshotGivenUp() (map[string]int, int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]int, len(m.givenUp))
	for k, v := range m.givenUp {
		out[k] = v
	}
	return out, m.invalid
}

// A publisher that ignores its context must not hold its rows, or the
// dispatcher's concurrency, for ever: the dispatcher resolves the call as a
// transient failure at PublishTimeout plus a grace, stops renewing the row,
// publishes the others, and ignores the late result.
func TestPublishIgnoringItsContextIsGivenUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newFaultStore()
		ids := enqueue(t, store.Store, 6)
		s := testSettings()
		s.BatchSize, s.MaxInFlight = 4, 4
		s.PublishTimeout = 2 * time.Second
		s.Retry = outbox.ExponentialBackoff{Base: time.Second, Jitter: outbox.Off}
		g := newGate()
		defer g.close()
		var mu sync.Mutex
		tried := map[reliar.MessageID]bool{}
		pub := newFakePublisher(func(ctx context.Context, env *reliar.SerializedEnvelope) error {
			mu.Lock()
			first := !tried[env.ID]
			tried[env.ID] = true
			mu.Unlock()
			if first && env.ID != ids[4] && env.ID != ids[5] {
				g.wait() // ignores ctx, and reports success once let go
			}
			return nil
		})
		m := newGivenUpMetrics()
		d, err := outbox.New(store, pub, s, outbox.WithMetrics(m))
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		stop, _ := running(t, d)
		waitFor(t, time.Minute, "every row published while four calls hang", func() bool {
			for _, id := range ids {
				if st, _ := store.Inspect(id); st.PublishedAt == nil {
					return false
				}
			}
			return true
		})
		if took := time.Since(start); took > s.PublishTimeout+time.Second+s.PollInterval+s.IdlePollInterval+s.Retry.(outbox.ExponentialBackoff).Base {
			t.Errorf("hung publishes held their rows for %v", took)
		}
		for _, id := range ids[:4] {
			st := stateOf(t, store.Store, id)
			if st.Attempts != 2 || st.LastError == nil || !strings.Contains(*st.LastError, "did not return") {
				t.Errorf("given-up row %s: attempts %d, last_error %v; want the timeout recorded, then a publish", id, st.Attempts, st.LastError)
			}
		}
		if h := d.Health(); h.StuckCalls != 4 {
			t.Errorf("Health.StuckCalls = %d while four calls hang, want 4", h.StuckCalls)
		}
		if got, _ := m.snapshotGivenUp(); got["publish"] != 4 {
			t.Errorf("given-up calls %v, want publish: 4", got)
		}
		g.open() // the late results arrive and are ignored
		waitFor(t, time.Minute, "stuck calls to return", func() bool { return d.Health().StuckCalls == 0 })
		if err, _ := stop(); err != nil {
			t.Fatalf("Run: %v", err)
		}
		for _, id := range ids {
			if st := stateOf(t, store.Store, id); st.PublishedAt == nil || st.LockedBy != nil || st.Attempts > 2 {
				t.Errorf("row %s after the late results: %+v", id, st)
			}
		}
	})
}

// A store call that ignores its context is given up at StoreTimeout plus a
// grace (an outcome write, which makes two calls, at twice that): a hung
// write is treated as failed and written again, a hung claim as a failed
// claim; the late results are ignored, and rows a late claim took are
// released.
func TestStoreCallsIgnoringTheirContextAreGivenUp(t *testing.T) {
	for _, op := range []string{"complete", "acquire", "extend"} {
		t.Run(op, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				store := newFaultStore()
				ids := enqueue(t, store.Store, 3)
				s := testSettings()
				g := newGate()
				defer g.close()
				var once sync.Once
				store.hook(op, func(context.Context, int) error {
					hang := false
					once.Do(func() { hang = true })
					if hang {
						g.wait()
					}
					return nil
				})
				publish := newFakePublisher(nil)
				if op == "extend" {
					// Keep the rows held past a renewal tick.
					s.Lease, s.PublishTimeout, s.StoreTimeout, s.DrainTimeout = 10*time.Second, 8*time.Second, time.Second, 5*time.Second
					publish = newFakePublisher(sleepPublish(6 * time.Second))
				}
				m := newGivenUpMetrics()
				d, err := outbox.New(store, publish, s, outbox.WithMetrics(m))
				if err != nil {
					t.Fatal(err)
				}
				stop, _ := running(t, d)
				waitFor(t, 5*time.Minute, "every row published with one "+op+" hung", func() bool {
					for _, id := range ids {
						if st, _ := store.Inspect(id); st.PublishedAt == nil {
							return false
						}
					}
					return true
				})
				waitFor(t, time.Minute, "the hung call to be counted", func() bool { return d.Health().StuckCalls == 1 })
				call := map[string]string{"complete": "outcome", "acquire": "claim", "extend": "renew"}[op]
				if got, _ := m.snapshotGivenUp(); got[call] != 1 {
					t.Errorf("given-up calls %v, want %s: 1", got, call)
				}
				g.open()
				waitFor(t, time.Minute, "the stuck call to return", func() bool { return d.Health().StuckCalls == 0 })
				if err, _ := stop(); err != nil {
					t.Fatalf("Run: %v", err)
				}
				// A late claim's rows went back: nothing stays leased.
				for _, id := range ids {
					if st := stateOf(t, store.Store, id); st.LockedBy != nil {
						t.Errorf("row %s still leased after the run: %+v", id, st)
					}
				}
			})
		})
	}
}

// notifyingStore serves Wakeups through a function of the test.
type notifyingStore struct {
	*faultStore
	wakeups func(ctx context.Context) (<-chan struct{}, error)
}

func (s *notifyingStore) Wakeups(ctx context.Context) (<-chan struct{}, error) { return s.wakeups(ctx) }

// Subscribing to wake-ups is bounded by the caller's context and by
// StoreTimeout: a store whose Wakeups waits for its context to end does not
// keep Run from returning once cancelled.
func TestRunReturnsWhileSubscribingToWakeups(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &notifyingStore{faultStore: newFaultStore()}
		store.wakeups = func(ctx context.Context) (<-chan struct{}, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}
		enqueue(t, store.Store, 1)
		s := testSettings()
		d, err := outbox.New(store, newFakePublisher(nil), s)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- d.Run(ctx) }()
		time.Sleep(100 * time.Millisecond)
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
		case <-time.After(s.DrainTimeout):
			t.Fatal("Run did not return within DrainTimeout while subscribing to wake-ups")
		}
	})
}

// A subscription that fails (or hangs past StoreTimeout) is retried from the
// loop with backoff, logged once, and the wake-ups work once it succeeds.
func TestFailedWakeupSubscriptionIsRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &notifyingStore{faultStore: newFaultStore()}
		g := newGate()
		defer g.close()
		var mu sync.Mutex
		attempts := 0
		store.wakeups = func(ctx context.Context) (<-chan struct{}, error) {
			mu.Lock()
			attempts++
			n := attempts
			mu.Unlock()
			switch n {
			case 1, 2:
				return nil, errors.New("listener connection refused")
			case 3:
				g.wait() // ignores ctx: given up at StoreTimeout plus a grace
				return nil, errors.New("late")
			}
			return store.Store.Wakeups(ctx)
		}
		var logs bytes.Buffer
		var logMu sync.Mutex
		logger := slog.New(slog.NewTextHandler(lockedWriter{&logMu, &logs}, nil))
		s := testSettings()
		s.IdlePollInterval = time.Hour // only a wake-up can make a claim soon
		d, err := outbox.New(store, newFakePublisher(nil), s, outbox.WithLogger(logger))
		if err != nil {
			t.Fatal(err)
		}
		stop, _ := running(t, d)
		waitFor(t, 10*time.Minute, "a working subscription", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return attempts >= 4
		})
		time.Sleep(time.Second)
		id := enqueue(t, store.Store, 1)[0]
		waitFor(t, time.Second, "the wake-up to claim and publish the new row", func() bool {
			st, _ := store.Inspect(id)
			return st.PublishedAt != nil
		})
		g.open()
		if err, _ := stop(); err != nil {
			t.Fatalf("Run: %v", err)
		}
		logMu.Lock()
		defer logMu.Unlock()
		if n := strings.Count(logs.String(), "store wake-ups unavailable"); n != 1 {
			t.Errorf("the failing subscription was logged %d times at warn, want once:\n%s", n, logs.String())
		}
	})
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}

// A row whose publish failed but whose Fail write has not landed by the end
// of the drain is released, so the next owner retries it at once instead of
// after a lease (and without counting a lapsed claim).
func TestDrainReleasesFailedRowsWhoseFailDidNotLand(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newFaultStore()
		id := enqueue(t, store.Store, 1)[0]
		store.hook("fail", func(context.Context, int) error { return errors.New("connection reset") })
		s := testSettings()
		pub := newFakePublisher(func(context.Context, *reliar.SerializedEnvelope) error { return errTransient })
		d, err := outbox.New(store, pub, s)
		if err != nil {
			t.Fatal(err)
		}
		stop, _ := running(t, d)
		waitFor(t, time.Minute, "the failed Fail write", func() bool { return len(store.callsOf("fail")) > 0 })
		if err, took := stop(); err != nil || took > s.DrainTimeout {
			t.Fatalf("Run = %v after %v", err, took)
		}
		st := stateOf(t, store.Store, id)
		if st.LockedBy != nil || st.PublishedAt != nil || st.DeadAt != nil {
			t.Fatalf("failed row after the drain: %+v; want it released", st)
		}
		if len(store.callsOf("release")) == 0 {
			t.Fatal("no Release call at the drain")
		}
	})
}

// A PublishBatch that returns a nil or short result slice fails every row
// of the batch transiently (success would lose messages), is logged at
// error once per publisher, and is counted.
func TestBatchWithWrongResultCountIsLoggedOnceAndCounted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newFaultStore()
		ids := enqueue(t, store.Store, 4)
		bp := &batchPublisher{fakePublisher: newFakePublisher(nil)}
		var mu sync.Mutex
		calls := 0
		bp.batchFn = func(_ context.Context, envs []*reliar.SerializedEnvelope) []error {
			mu.Lock()
			defer mu.Unlock()
			calls++
			if calls <= 2 {
				return make([]error, len(envs)-1) // one short
			}
			return make([]error, len(envs))
		}
		var logs bytes.Buffer
		var logMu sync.Mutex
		logger := slog.New(slog.NewTextHandler(lockedWriter{&logMu, &logs}, nil))
		m := newGivenUpMetrics()
		s := testSettings()
		s.Retry = outbox.ExponentialBackoff{Base: time.Second, Jitter: outbox.Off}
		d, err := outbox.New(store, bp, s, outbox.WithMetrics(m), outbox.WithLogger(logger))
		if err != nil {
			t.Fatal(err)
		}
		stop, _ := running(t, d)
		waitFor(t, time.Minute, "every row published after two short results", func() bool {
			for _, id := range ids {
				if st, _ := store.Inspect(id); st.PublishedAt == nil {
					return false
				}
			}
			return true
		})
		if err, _ := stop(); err != nil {
			t.Fatalf("Run: %v", err)
		}
		if _, invalid := m.snapshotGivenUp(); invalid != 2 {
			t.Errorf("invalid batch results counted %d times, want 2", invalid)
		}
		logMu.Lock()
		defer logMu.Unlock()
		if n := strings.Count(logs.String(), "level=ERROR msg=\"batch publisher returned"); n != 1 {
			t.Errorf("wrong result count logged %d times at error, want once:\n%s", n, logs.String())
		}
	})
}
