package harness

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/reliar/reliar/bench/internal/payload"
	"github.com/reliar/reliar/bench/internal/report"
	"github.com/reliar/reliar/bench/internal/sink"
)

// BurstConfig sizes a burst: producers committing single-message
// transactions as fast as they can, as `reliar demo` does.
type BurstConfig struct {
	// Messages is the number of measured single-message transactions.
	Messages int
	// Producers is the number of goroutines committing them.
	Producers int
	// Timeout bounds each of the two runs.
	Timeout time.Duration
}

// Burst runs the same producers twice, each time on a fresh schema or file:
// alone, with nothing dispatching (the BurstAlone result: commits per second
// and the transactions' percentiles), then with the system dispatching to
// the sink (the Burst result: messages delivered per second, from the
// producers' start to the last first arrival, and commit → delivery
// percentiles). Both start with one unmeasured message, which the second
// run also waits to see delivered.
func (h *Harness) Burst(ctx context.Context, sys System, rep int, cfg BurstConfig) (alone, burst report.Result, err error) {
	alone = h.result(report.BurstAlone, sys.Name, rep, cfg.Messages)
	burst = h.result(report.Burst, sys.Name, rep, cfg.Messages)
	for _, r := range []*report.Result{&alone, &burst} {
		r.PerTx, r.Producers = 1, cfg.Producers
	}
	if cfg.Messages <= 0 || cfg.Producers <= 0 {
		err := errors.New("harness: burst needs positive Messages and Producers")
		alone.Error, burst.Error = err.Error(), err.Error()
		return alone, burst, err
	}
	errAlone := h.burstAlone(ctx, sys, cfg, &alone)
	errBurst := h.burstDispatching(ctx, sys, cfg, &burst)
	return alone, burst, errors.Join(errAlone, errBurst)
}

// burstAlone is the run with nothing dispatching.
func (h *Harness) burstAlone(ctx context.Context, sys System, cfg BurstConfig, res *report.Result) error {
	ctx, cancel := context.WithTimeoutCause(ctx, cfg.Timeout, fmt.Errorf("%w: burst of %s alone exceeded %s", ErrTimeout, sys.Name, cfg.Timeout))
	defer cancel()
	committed := make([]int64, cfg.Messages+1)
	sent := make([]int64, cfg.Messages+1)
	var start time.Time
	err := h.withTarget(ctx, sys, func(t Target) error {
		if err := commitOne(ctx, t, 0, committed, sent); err != nil {
			return err
		}
		start = time.Now()
		return produce(ctx, t, cfg.Producers, committed, sent)
	})
	if err != nil {
		res.Error = err.Error()
		return err
	}
	tx := make([]time.Duration, 0, cfg.Messages)
	for seq := 1; seq <= cfg.Messages; seq++ {
		tx = append(tx, time.Duration(committed[seq]-sent[seq]))
	}
	slices.Sort(tx)
	res.Seconds = time.Duration(slices.Max(committed[1:]) - start.UnixNano()).Seconds()
	res.PerSecond = float64(cfg.Messages) / res.Seconds
	res.P50Ms = ms(Percentile(tx, 50))
	res.P99Ms = ms(Percentile(tx, 99))
	res.MaxMs = ms(tx[len(tx)-1])
	return nil
}

// burstDispatching is the run with the system dispatching.
func (h *Harness) burstDispatching(ctx context.Context, sys System, cfg BurstConfig, res *report.Result) error {
	ctx, cancel := context.WithTimeoutCause(ctx, cfg.Timeout, fmt.Errorf("%w: burst of %s exceeded %s", ErrTimeout, sys.Name, cfg.Timeout))
	defer cancel()
	committed := make([]int64, cfg.Messages+1)
	sent := make([]int64, cfg.Messages+1)
	s := sink.New(cfg.Messages + 1)
	var start time.Time
	err := h.withTarget(ctx, sys, func(t Target) error {
		stop, err := t.Start(ctx, s)
		if err != nil {
			return fmt.Errorf("harness: start: %w", err)
		}
		runErr := commitOne(ctx, t, 0, committed, sent)
		if runErr == nil {
			runErr = awaitWarmup(ctx, s)
		}
		if runErr == nil {
			start = time.Now()
			runErr = produce(ctx, t, cfg.Producers, committed, sent)
		}
		if runErr == nil {
			runErr = waitArrived(ctx, s)
		}
		res.Duplicates = s.Duplicates()
		return errors.Join(runErr, stopTarget(ctx, stop))
	})
	if err != nil {
		res.Error = err.Error()
		return err
	}
	var last int64
	for seq := 1; seq <= cfg.Messages; seq++ {
		arrived, _, _ := s.Arrival(seq)
		last = max(last, arrived)
	}
	res.Seconds = time.Duration(last - start.UnixNano()).Seconds()
	res.PerSecond = float64(cfg.Messages) / res.Seconds
	setLatencies(res, s, committed)
	return nil
}

// produce commits messages 1 to len(committed)-1, one per transaction, from
// producers goroutines taking the next number as they finish the last,
// recording when each was sent (before its Begin) and when its Commit
// returned. It returns the first error; the other producers stop at their
// next message.
func produce(ctx context.Context, t Target, producers int, committed, sent []int64) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var next atomic.Int64
	var first error
	var once sync.Once
	var wg sync.WaitGroup
	for range producers {
		wg.Go(func() {
			for {
				seq := int(next.Add(1))
				if seq >= len(committed) || ctx.Err() != nil {
					return
				}
				if err := commitOne(ctx, t, seq, committed, sent); err != nil {
					once.Do(func() { first = err; cancel() })
					return
				}
			}
		})
	}
	wg.Wait()
	if first == nil && ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return first
}

// commitOne commits message seq in a transaction of its own.
func commitOne(ctx context.Context, t Target, seq int, committed, sent []int64) error {
	now := time.Now().UnixNano()
	if err := t.Enqueue(ctx, []payload.Doc{payload.New(seq, now)}); err != nil {
		return fmt.Errorf("harness: enqueue message %d: %w", seq, err)
	}
	sent[seq], committed[seq] = now, time.Now().UnixNano()
	return nil
}
