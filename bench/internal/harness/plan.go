package harness

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/reliar/reliar/bench/internal/report"
)

// Plan is a whole comparison: the systems of each scenario, run
// interleaved (A B C D, A B C D, …) for Reps repetitions, one scenario
// after the other: drain (with enqueue), enqueue-tx, latency, jetstream,
// burst.
type Plan struct {
	// Reps is the number of repetitions of every run.
	Reps int
	// Drain and DrainSystems configure the drain (and enqueue) runs; no
	// systems skips them.
	Drain        DrainConfig
	DrainSystems []System
	// Latency and LatencySystems configure the latency runs; no systems
	// skips them.
	Latency        LatencyConfig
	LatencySystems []System
	// JetStream and JetStreamSystems configure drain runs through a
	// broker, reported under JetStream's Scenario (their enqueue results
	// are not reported); no systems skips them.
	JetStream        DrainConfig
	JetStreamSystems []System
	// EnqueueTx and EnqueueTxSystems configure the single-message
	// transaction runs; no systems skips them.
	EnqueueTx        EnqueueTxConfig
	EnqueueTxSystems []System
	// Burst and BurstSystems configure the burst runs (each a BurstAlone
	// and a Burst result); no systems skips them.
	Burst        BurstConfig
	BurstSystems []System
}

// Run executes p, handing every result to emit as soon as it is known, and
// returns the errors of the failed runs joined. A failed run does not stop
// the others; ctx does.
func (h *Harness) Run(ctx context.Context, p Plan, emit func(report.Result)) error {
	stamp := func(r report.Result) {
		r.Time = time.Now().UTC()
		emit(r)
	}
	var errs []error
	for rep := 1; rep <= p.Reps; rep++ {
		for _, sys := range p.DrainSystems {
			if err := ctx.Err(); err != nil {
				return errors.Join(append(errs, err)...)
			}
			enq, drain, err := h.Drain(ctx, sys, rep, p.Drain)
			if err != nil {
				errs = append(errs, fmt.Errorf("drain %s rep %d: %w", sys.Name, rep, err))
			}
			stamp(enq)
			stamp(drain)
		}
	}
	for rep := 1; rep <= p.Reps; rep++ {
		for _, sys := range p.EnqueueTxSystems {
			if err := ctx.Err(); err != nil {
				return errors.Join(append(errs, err)...)
			}
			res, err := h.EnqueueTx(ctx, sys, rep, p.EnqueueTx)
			if err != nil {
				errs = append(errs, fmt.Errorf("enqueue-tx %s rep %d: %w", sys.Name, rep, err))
			}
			stamp(res)
		}
	}
	for rep := 1; rep <= p.Reps; rep++ {
		for _, sys := range p.LatencySystems {
			if err := ctx.Err(); err != nil {
				return errors.Join(append(errs, err)...)
			}
			res, err := h.Latency(ctx, sys, rep, p.Latency)
			if err != nil {
				errs = append(errs, fmt.Errorf("latency %s rep %d: %w", sys.Name, rep, err))
			}
			stamp(res)
		}
	}
	for rep := 1; rep <= p.Reps; rep++ {
		for _, sys := range p.JetStreamSystems {
			if err := ctx.Err(); err != nil {
				return errors.Join(append(errs, err)...)
			}
			_, res, err := h.Drain(ctx, sys, rep, p.JetStream)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s %s rep %d: %w", res.Scenario, sys.Name, rep, err))
			}
			stamp(res)
		}
	}
	for rep := 1; rep <= p.Reps; rep++ {
		for _, sys := range p.BurstSystems {
			if err := ctx.Err(); err != nil {
				return errors.Join(append(errs, err)...)
			}
			alone, burst, err := h.Burst(ctx, sys, rep, p.Burst)
			if err != nil {
				errs = append(errs, fmt.Errorf("burst %s rep %d: %w", sys.Name, rep, err))
			}
			stamp(alone)
			stamp(burst)
		}
	}
	return errors.Join(errs...)
}
