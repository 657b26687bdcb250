package harness

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/reliar/reliar/bench/internal/payload"
	"github.com/reliar/reliar/bench/internal/pgenv"
	"github.com/reliar/reliar/bench/internal/report"
)

// freshSystem opens a new memTarget, changed by mod, for every run, as a
// real system gets a fresh schema. It counts the runs it opened.
func freshSystem(name string, onFile bool, mod func(*memTarget)) (System, *int) {
	var mu sync.Mutex
	opened := new(int)
	return System{Name: name, OnFile: onFile, Open: func(_ context.Context, env pgenv.Env) (Target, error) {
		if onFile != (env.Dir != "" && env.Schema == "") {
			return nil, fmt.Errorf("env %+v for a system with OnFile %v", env, onFile)
		}
		mu.Lock()
		*opened++
		mu.Unlock()
		m := newMemTarget()
		if mod != nil {
			mod(m)
		}
		return m, nil
	}}, opened
}

// failingEnqueue makes every Enqueue after the first n fail.
type failingEnqueue struct {
	*memTarget
	mu sync.Mutex
	n  int
}

var errEnqueue = errors.New("enqueue refused")

func (f *failingEnqueue) Enqueue(ctx context.Context, docs []payload.Doc) error {
	f.mu.Lock()
	f.n--
	left := f.n
	f.mu.Unlock()
	if left < 0 {
		return errEnqueue
	}
	return f.memTarget.Enqueue(ctx, docs)
}

func TestEnqueueTx(t *testing.T) {
	sys, opened := freshSystem("mem", false, nil)
	h := &Harness{DSN: pgenv.DefaultDSN}
	res, err := h.EnqueueTx(t.Context(), sys, 2, EnqueueTxConfig{Transactions: 50, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK() || res.Scenario != report.EnqueueTx || res.Messages != 50 || res.PerTx != 1 || res.Rep != 2 || *opened != 1 {
		t.Errorf("result %+v, %d runs opened", res, *opened)
	}
	if res.P50Ms <= 0 || res.P50Ms > res.P99Ms || res.P99Ms > res.MaxMs || res.PerSecond <= 0 {
		t.Errorf("p50 %v p99 %v max %v ms, %v tx/s", res.P50Ms, res.P99Ms, res.MaxMs, res.PerSecond)
	}
	refusing := System{Name: "refusing", Open: func(context.Context, pgenv.Env) (Target, error) {
		return &failingEnqueue{memTarget: newMemTarget(), n: 3}, nil
	}}
	if res, err := h.EnqueueTx(t.Context(), refusing, 1, EnqueueTxConfig{Transactions: 10, Timeout: 30 * time.Second}); !errors.Is(err, errEnqueue) || res.OK() {
		t.Fatalf("error %v, result %+v; want the enqueue's error", err, res)
	}
	if _, err := h.EnqueueTx(t.Context(), sys, 1, EnqueueTxConfig{Timeout: time.Second}); err == nil {
		t.Error("a run of 0 transactions did not fail")
	}
}

func TestBurst(t *testing.T) {
	sys, opened := freshSystem("mem", true, nil)
	h := &Harness{FileDir: t.TempDir()}
	alone, burst, err := h.Burst(t.Context(), sys, 1, BurstConfig{Messages: 300, Producers: 4, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if *opened != 2 {
		t.Errorf("%d runs opened, want 2 (alone, then dispatching)", *opened)
	}
	for _, r := range []report.Result{alone, burst} {
		if !r.OK() || r.Messages != 300 || r.Producers != 4 || r.PerTx != 1 || r.PerSecond <= 0 || r.Duplicates != 0 {
			t.Errorf("%s result %+v", r.Scenario, r)
		}
		if r.P50Ms < 0 || r.P50Ms > r.P99Ms || r.P99Ms > r.MaxMs {
			t.Errorf("%s: p50 %v p99 %v max %v ms", r.Scenario, r.P50Ms, r.P99Ms, r.MaxMs)
		}
	}
	if alone.Scenario != report.BurstAlone || burst.Scenario != report.Burst {
		t.Errorf("scenarios %q and %q", alone.Scenario, burst.Scenario)
	}
	if burst.P50Ms <= 0 || burst.EnqueueTxP50Ms <= 0 || burst.EnqueueTxP50Ms > burst.EnqueueTxP99Ms {
		t.Errorf("burst: commit → delivery p50 %v ms, tx p50 %v p99 %v ms", burst.P50Ms, burst.EnqueueTxP50Ms, burst.EnqueueTxP99Ms)
	}
}

func TestBurstFailures(t *testing.T) {
	h := &Harness{}
	stuck, _ := freshSystem("stuck", true, func(m *memTarget) { m.deliver = false })
	alone, burst, err := h.Burst(t.Context(), stuck, 1, BurstConfig{Messages: 20, Producers: 2, Timeout: 2 * time.Second})
	if !errors.Is(err, ErrTimeout) || !alone.OK() || burst.OK() {
		t.Fatalf("a system that never delivers: error %v, alone %+v, burst %+v", err, alone, burst)
	}
	refusing := System{Name: "refusing", Open: func(context.Context, pgenv.Env) (Target, error) {
		return &failingEnqueue{memTarget: newMemTarget(), n: 5}, nil
	}}
	alone, burst, err = h.Burst(t.Context(), refusing, 1, BurstConfig{Messages: 50, Producers: 3, Timeout: 30 * time.Second})
	if !errors.Is(err, errEnqueue) || alone.OK() || burst.OK() {
		t.Fatalf("a refusing producer: error %v, alone %+v, burst %+v", err, alone, burst)
	}
	if _, _, err := h.Burst(t.Context(), refusing, 1, BurstConfig{Messages: 5, Timeout: time.Second}); err == nil {
		t.Error("a burst without producers did not fail")
	}
}
