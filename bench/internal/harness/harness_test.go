package harness

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reliar/reliar/bench/internal/payload"
	"github.com/reliar/reliar/bench/internal/pgenv"
	"github.com/reliar/reliar/bench/internal/report"
	"github.com/reliar/reliar/bench/internal/sink"
)

// memTarget dispatches in memory: committed documents go to the sink from
// one goroutine, and are done once delivered.
type memTarget struct {
	mu       sync.Mutex
	queue    []payload.Doc
	pending  int64
	deliver  bool // false: never deliver anything
	startErr error
	wake     chan struct{}
	closed   bool
}

func newMemTarget() *memTarget { return &memTarget{deliver: true, wake: make(chan struct{}, 1)} }

func (m *memTarget) Enqueue(_ context.Context, docs []payload.Doc) error {
	m.mu.Lock()
	m.queue = append(m.queue, docs...)
	m.pending += int64(len(docs))
	m.mu.Unlock()
	select {
	case m.wake <- struct{}{}:
	default:
	}
	return nil
}

func (m *memTarget) Start(ctx context.Context, s *sink.Sink) (func(context.Context) error, error) {
	if m.startErr != nil {
		return nil, m.startErr
	}
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			m.mu.Lock()
			batch := m.queue
			if m.deliver {
				m.queue = nil
			} else {
				batch = nil
			}
			m.mu.Unlock()
			for _, d := range batch {
				_ = s.DeliverDoc(d)
				m.mu.Lock()
				m.pending--
				m.mu.Unlock()
			}
			select {
			case <-m.wake:
			case <-time.After(time.Millisecond):
			case <-rctx.Done():
				return
			}
		}
	})
	return func(context.Context) error { cancel(); wg.Wait(); return nil }, nil
}

func (m *memTarget) Pending(context.Context) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.pending, nil
}

func (m *memTarget) Close(context.Context) error {
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	return nil
}

func memSystem(name string, t *memTarget, opened *[]string, mu *sync.Mutex) System {
	return System{Name: name, Open: func(ctx context.Context, env pgenv.Env) (Target, error) {
		if !strings.HasPrefix(env.Schema, "bench_") {
			return nil, fmt.Errorf("schema %q", env.Schema)
		}
		if opened != nil {
			mu.Lock()
			*opened = append(*opened, name)
			mu.Unlock()
		}
		return t, nil
	}}
}

func TestDrain(t *testing.T) {
	target := newMemTarget()
	var ended []string
	h := &Harness{DSN: pgenv.DefaultDSN, Quick: true, Around: func(system string, rep int) func() {
		return func() { ended = append(ended, fmt.Sprintf("%s/%d", system, rep)) }
	}}
	enq, drain, err := h.Drain(t.Context(), memSystem("mem", target, nil, nil), 2, DrainConfig{Messages: 250, PerTx: 100, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if !enq.OK() || enq.Scenario != report.Enqueue || enq.PerSecond <= 0 || enq.Rep != 2 || !enq.Quick {
		t.Errorf("enqueue result %+v", enq)
	}
	if !drain.OK() || drain.Scenario != report.Drain || drain.PerSecond <= 0 || drain.Messages != 250 || drain.PayloadBytes != payload.Size {
		t.Errorf("drain result %+v", drain)
	}
	if !slices.Equal(ended, []string{"mem/2"}) {
		t.Errorf("Around ended %v, want [mem/2]", ended)
	}
	if !target.closed {
		t.Error("the target was not closed")
	}
}

func TestDrainScenarioName(t *testing.T) {
	h := &Harness{DSN: pgenv.DefaultDSN}
	_, drain, err := h.Drain(t.Context(), memSystem("mem", newMemTarget(), nil, nil), 1,
		DrainConfig{Messages: 10, PerTx: 3, Timeout: 30 * time.Second, Scenario: report.JetStream})
	if err != nil || drain.Scenario != report.JetStream {
		t.Fatalf("scenario %q, error %v; want %q", drain.Scenario, err, report.JetStream)
	}
}

func TestDrainFailures(t *testing.T) {
	stuck := newMemTarget()
	stuck.deliver = false
	broken := newMemTarget()
	broken.startErr = errors.New("no start")
	for _, tc := range []struct {
		name   string
		target *memTarget
		cfg    DrainConfig
		want   error
	}{
		{"never delivers", stuck, DrainConfig{Messages: 10, PerTx: 5, Timeout: 2 * time.Second}, ErrTimeout},
		{"start fails", broken, DrainConfig{Messages: 10, PerTx: 5, Timeout: 30 * time.Second}, broken.startErr},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &Harness{DSN: pgenv.DefaultDSN}
			_, drain, err := h.Drain(t.Context(), memSystem("mem", tc.target, nil, nil), 1, tc.cfg)
			if !errors.Is(err, tc.want) {
				t.Fatalf("error = %v, want %v", err, tc.want)
			}
			if drain.OK() || drain.PerSecond != 0 {
				t.Fatalf("a failed drain reported %+v", drain)
			}
			if !tc.target.closed {
				t.Fatal("the target was not closed after a failure")
			}
		})
	}
}

func TestBadConfigs(t *testing.T) {
	h := &Harness{DSN: pgenv.DefaultDSN}
	sys := memSystem("mem", newMemTarget(), nil, nil)
	if _, _, err := h.Drain(t.Context(), sys, 1, DrainConfig{PerTx: 1, Timeout: time.Second}); err == nil {
		t.Error("a drain of 0 messages did not fail")
	}
	if _, err := h.Latency(t.Context(), sys, 1, LatencyConfig{Messages: 1, Timeout: time.Second}); err == nil {
		t.Error("a latency run at rate 0 did not fail")
	}
}

func TestLatency(t *testing.T) {
	h := &Harness{DSN: pgenv.DefaultDSN}
	res, err := h.Latency(t.Context(), memSystem("mem", newMemTarget(), nil, nil), 1, LatencyConfig{Messages: 40, Rate: 400, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK() || res.Scenario != report.Latency || res.Messages != 40 || res.PerTx != 1 {
		t.Errorf("result %+v", res)
	}
	if res.P50Ms <= 0 || res.P50Ms > res.P99Ms || res.P99Ms > res.MaxMs || res.P99Ms > 1000 {
		t.Errorf("p50 %v p99 %v max %v ms", res.P50Ms, res.P99Ms, res.MaxMs)
	}
}

func TestLatencyWarmupTimeout(t *testing.T) {
	stuck := newMemTarget()
	stuck.deliver = false
	h := &Harness{DSN: pgenv.DefaultDSN}
	res, err := h.Latency(t.Context(), memSystem("mem", stuck, nil, nil), 1, LatencyConfig{Messages: 5, Rate: 100, Timeout: 2 * time.Second})
	if !errors.Is(err, ErrTimeout) || res.OK() {
		t.Fatalf("error %v, result %+v; want ErrTimeout", err, res)
	}
}

func TestRunInterleaves(t *testing.T) {
	var mu sync.Mutex
	var opened []string
	bad := newMemTarget()
	bad.startErr = errors.New("no start")
	plan := Plan{
		Reps:             2,
		Drain:            DrainConfig{Messages: 5, PerTx: 5, Timeout: 30 * time.Second},
		DrainSystems:     []System{memSystem("a", newMemTarget(), &opened, &mu), memSystem("b", bad, &opened, &mu)},
		Latency:          LatencyConfig{Messages: 3, Rate: 1000, Timeout: 30 * time.Second},
		LatencySystems:   []System{memSystem("c", newMemTarget(), &opened, &mu)},
		JetStream:        DrainConfig{Messages: 5, PerTx: 5, Timeout: 30 * time.Second, Scenario: report.JetStream},
		JetStreamSystems: []System{memSystem("d", newMemTarget(), &opened, &mu)},
		EnqueueTx:        EnqueueTxConfig{Transactions: 3, Timeout: 30 * time.Second},
		EnqueueTxSystems: []System{memSystem("e", newMemTarget(), &opened, &mu)},
		Burst:            BurstConfig{Messages: 4, Producers: 2, Timeout: 30 * time.Second},
	}
	burst, _ := freshSystem("f", false, nil)
	plan.BurstSystems = []System{burst}
	h := &Harness{DSN: pgenv.DefaultDSN}
	var got []string
	err := h.Run(t.Context(), plan, func(r report.Result) {
		if r.Time.IsZero() {
			t.Errorf("result without a time: %+v", r)
		}
		got = append(got, fmt.Sprintf("%s %s %d %v", r.Scenario, r.System, r.Rep, r.OK()))
	})
	if !errors.Is(err, bad.startErr) {
		t.Fatalf("Run error = %v, want the failed runs' errors", err)
	}
	if want := []string{"a", "b", "a", "b", "e", "e", "c", "c", "d", "d"}; !slices.Equal(opened, want) {
		t.Errorf("opened %v, want %v", opened, want)
	}
	want := []string{
		"enqueue a 1 true", "drain a 1 true", "enqueue b 1 true", "drain b 1 false",
		"enqueue a 2 true", "drain a 2 true", "enqueue b 2 true", "drain b 2 false",
		"enqueue_tx e 1 true", "enqueue_tx e 2 true",
		"latency c 1 true", "latency c 2 true",
		"jetstream d 1 true", "jetstream d 2 true",
		"burst_alone f 1 true", "burst f 1 true", "burst_alone f 2 true", "burst f 2 true",
	}
	if !slices.Equal(got, want) {
		t.Errorf("results\n%v\nwant\n%v", got, want)
	}
}

func TestRunStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	h := &Harness{DSN: pgenv.DefaultDSN}
	plan := Plan{Reps: 1, DrainSystems: []System{memSystem("a", newMemTarget(), nil, nil)}}
	if err := h.Run(ctx, plan, func(report.Result) { t.Error("a result after cancellation") }); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run error = %v, want context.Canceled", err)
	}
}

func TestPercentile(t *testing.T) {
	var xs []time.Duration
	for i := 1; i <= 1000; i++ {
		xs = append(xs, time.Duration(i))
	}
	for _, tc := range []struct {
		in   []time.Duration
		p    float64
		want time.Duration
	}{
		{nil, 50, 0},
		{[]time.Duration{7}, 99, 7},
		{xs, 50, 500},
		{xs, 99, 990},
		{xs, 100, 1000},
		{xs, 0, 1},
		{xs[:10], 99, 10},
	} {
		if got := Percentile(tc.in, tc.p); got != tc.want {
			t.Errorf("Percentile(%d values, %v) = %v, want %v", len(tc.in), tc.p, got, tc.want)
		}
	}
}
