package harness

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/reliar/reliar/bench/internal/payload"
	"github.com/reliar/reliar/bench/internal/report"
	"github.com/reliar/reliar/bench/internal/sink"
)

// LatencyConfig sizes a latency run.
type LatencyConfig struct {
	// Messages is the number of single-message transactions measured.
	Messages int
	// Rate is how many of them are committed per second.
	Rate int
	// Timeout bounds the run.
	Timeout time.Duration
}

// warmupTimeout bounds the wait for the first, unmeasured message, which
// proves that the system is dispatching.
const warmupTimeout = 15 * time.Second

// Latency starts the system on an empty outbox, sends one unmeasured
// message and waits for it, then commits cfg.Messages single-message
// transactions at cfg.Rate per second and measures, for each, the time from
// its Commit returning to its arrival at the sink.
func (h *Harness) Latency(ctx context.Context, sys System, rep int, cfg LatencyConfig) (res report.Result, err error) {
	res = h.result(report.Latency, sys.Name, rep, cfg.Messages)
	res.PerTx = 1
	if cfg.Messages <= 0 || cfg.Rate <= 0 {
		return res, errors.New("harness: latency needs positive Messages and Rate")
	}
	ctx, cancel := context.WithTimeoutCause(ctx, cfg.Timeout, fmt.Errorf("%w: latency of %s exceeded %s", ErrTimeout, sys.Name, cfg.Timeout))
	defer cancel()
	committed := make([]int64, cfg.Messages+1) // by seq; seq 0 is the warm-up
	s := sink.New(cfg.Messages + 1)
	err = h.withTarget(ctx, sys, func(t Target) error {
		stop, err := t.Start(ctx, s)
		if err != nil {
			return fmt.Errorf("harness: start: %w", err)
		}
		runErr := pace(ctx, t, s, committed, cfg)
		if runErr == nil {
			runErr = waitArrived(ctx, s)
		}
		res.Duplicates = s.Duplicates()
		return errors.Join(runErr, stopTarget(ctx, stop))
	})
	if err != nil {
		res.Error = err.Error()
		return res, err
	}
	setLatencies(&res, s, committed)
	return res, nil
}

// setLatencies fills res's percentiles from messages 1 to len(committed)-1
// of s (message 0 is the warm-up): commit → arrival, send → arrival, and the
// producer transactions themselves (send → commit).
func setLatencies(res *report.Result, s *sink.Sink, committed []int64) {
	var fromCommit, fromSend, tx []time.Duration
	for seq := 1; seq < len(committed); seq++ {
		arrived, sent, _ := s.Arrival(seq)
		fromCommit = append(fromCommit, time.Duration(max(0, arrived-committed[seq])))
		fromSend = append(fromSend, time.Duration(max(0, arrived-sent)))
		tx = append(tx, time.Duration(max(0, committed[seq]-sent)))
	}
	if len(fromCommit) == 0 {
		return
	}
	slices.Sort(fromCommit)
	slices.Sort(fromSend)
	slices.Sort(tx)
	res.P50Ms = ms(Percentile(fromCommit, 50))
	res.P99Ms = ms(Percentile(fromCommit, 99))
	res.MaxMs = ms(fromCommit[len(fromCommit)-1])
	res.TxP50Ms = ms(Percentile(fromSend, 50))
	res.TxP99Ms = ms(Percentile(fromSend, 99))
	res.EnqueueTxP50Ms = ms(Percentile(tx, 50))
	res.EnqueueTxP99Ms = ms(Percentile(tx, 99))
}

// pace sends the warm-up message, waits for it, then commits the measured
// messages on a fixed schedule, recording when each Commit returned.
func pace(ctx context.Context, t Target, s *sink.Sink, committed []int64, cfg LatencyConfig) error {
	send := func(seq int) error {
		doc := payload.New(seq, time.Now().UnixNano())
		if err := t.Enqueue(ctx, []payload.Doc{doc}); err != nil {
			return fmt.Errorf("harness: enqueue message %d: %w", seq, err)
		}
		committed[seq] = time.Now().UnixNano()
		return nil
	}
	if err := send(0); err != nil {
		return err
	}
	if err := awaitWarmup(ctx, s); err != nil {
		return err
	}
	interval := time.Second / time.Duration(cfg.Rate)
	start := time.Now()
	for seq := 1; seq <= cfg.Messages; seq++ {
		if d := time.Until(start.Add(time.Duration(seq-1) * interval)); d > 0 {
			select {
			case <-time.After(d):
			case <-ctx.Done():
				return context.Cause(ctx)
			}
		}
		if err := send(seq); err != nil {
			return err
		}
	}
	return nil
}

// awaitWarmup waits for message 0, the unmeasured first one, which proves
// that the system is dispatching.
func awaitWarmup(ctx context.Context, s *sink.Sink) error {
	wctx, cancel := context.WithTimeout(ctx, warmupTimeout)
	defer cancel()
	for !s.Has(0) {
		select {
		case <-wctx.Done():
			if ctx.Err() != nil {
				return fmt.Errorf("%w (waiting for the warm-up message)", context.Cause(ctx))
			}
			return fmt.Errorf("%w: the warm-up message did not arrive within %s", ErrTimeout, warmupTimeout)
		case <-time.After(time.Millisecond):
		}
	}
	return nil
}

// waitArrived waits until every message has arrived at s.
func waitArrived(ctx context.Context, s *sink.Sink) error {
	select {
	case <-s.Done():
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%w (%d of %d messages arrived)", context.Cause(ctx), s.Received(), s.Size())
	}
}

// Percentile returns the p-th percentile (nearest rank) of sorted, or 0 when
// it is empty.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(float64(len(sorted))*p/100)) - 1
	return sorted[min(max(rank, 0), len(sorted)-1)]
}

// ms converts d to fractional milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
