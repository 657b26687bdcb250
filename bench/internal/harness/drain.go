package harness

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/reliar/reliar/bench/internal/payload"
	"github.com/reliar/reliar/bench/internal/report"
	"github.com/reliar/reliar/bench/internal/sink"
)

// DrainConfig sizes a drain run.
type DrainConfig struct {
	// Messages is the backlog preloaded before dispatching starts.
	Messages int
	// PerTx is the number of messages per producer transaction.
	PerTx int
	// Timeout bounds the run, preload included.
	Timeout time.Duration
	// Scenario names the drain result; empty means report.Drain.
	Scenario string
}

// Drain preloads cfg.Messages messages, PerTx per transaction, with nothing
// dispatching (the Enqueue result), then starts the system and times it
// until every message has arrived at the sink and is marked done in the
// database (the Drain result).
func (h *Harness) Drain(ctx context.Context, sys System, rep int, cfg DrainConfig) (enq, drain report.Result, err error) {
	enq = h.result(report.Enqueue, sys.Name, rep, cfg.Messages)
	enq.PerTx = cfg.PerTx
	drain = h.result(cmp.Or(cfg.Scenario, report.Drain), sys.Name, rep, cfg.Messages)
	drain.PerTx = cfg.PerTx
	if cfg.Messages <= 0 || cfg.PerTx <= 0 {
		return enq, drain, errors.New("harness: drain needs positive Messages and PerTx")
	}
	ctx, cancel := context.WithTimeoutCause(ctx, cfg.Timeout, fmt.Errorf("%w: drain of %s exceeded %s", ErrTimeout, sys.Name, cfg.Timeout))
	defer cancel()
	err = h.withTarget(ctx, sys, func(t Target) error {
		docs := make([]payload.Doc, cfg.Messages)
		now := time.Now().UnixNano()
		for i := range docs {
			docs[i] = payload.New(i, now)
		}
		start := time.Now()
		for i := 0; i < len(docs); i += cfg.PerTx {
			if err := t.Enqueue(ctx, docs[i:min(len(docs), i+cfg.PerTx)]); err != nil {
				return fmt.Errorf("harness: preload: %w", err)
			}
		}
		enq.Seconds = time.Since(start).Seconds()
		enq.PerSecond = float64(cfg.Messages) / enq.Seconds
		docs = nil
		runtime.GC() // the preload's garbage is not the dispatcher's cost

		s := sink.New(cfg.Messages)
		end := func() {}
		if h.Around != nil {
			end = h.Around(sys.Name, rep)
		}
		cpu0, t0 := cpuTime(), time.Now()
		stop, err := t.Start(ctx, s)
		if err != nil {
			end()
			return fmt.Errorf("harness: start: %w", err)
		}
		waitErr := waitDone(ctx, t, s)
		elapsed, cpu := time.Since(t0), cpuTime()-cpu0
		end()
		if waitErr == nil {
			arrived, _, _ := lastArrival(s, cfg.Messages)
			drain.Seconds = elapsed.Seconds()
			drain.PerSecond = float64(cfg.Messages) / drain.Seconds
			drain.ArrivedSeconds = time.Duration(arrived - t0.UnixNano()).Seconds()
			drain.CPUNsPerMsg = float64(cpu.Nanoseconds()) / float64(cfg.Messages)
		}
		drain.Duplicates = s.Duplicates()
		return errors.Join(waitErr, stopTarget(ctx, stop))
	})
	if err != nil {
		drain.Error = err.Error()
		if enq.Seconds == 0 {
			enq.Error = err.Error()
		}
	}
	return enq, drain, err
}

// lastArrival is the latest arrival time among messages 0 to n-1.
func lastArrival(s *sink.Sink, n int) (last int64, seq int, ok bool) {
	for i := range n {
		if a, _, has := s.Arrival(i); has && a > last {
			last, seq, ok = a, i, true
		}
	}
	return last, seq, ok
}

// result starts a Result of this harness.
func (h *Harness) result(scenario, system string, rep, messages int) report.Result {
	return report.Result{
		Scenario:     scenario,
		System:       system,
		Rep:          rep,
		Quick:        h.Quick,
		Messages:     messages,
		PayloadBytes: payload.Size,
	}
}
