package harness

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/reliar/reliar/bench/internal/payload"
	"github.com/reliar/reliar/bench/internal/report"
)

// EnqueueTxConfig sizes a run of single-message producer transactions.
type EnqueueTxConfig struct {
	// Transactions is the number of measured transactions.
	Transactions int
	// Timeout bounds the run.
	Timeout time.Duration
}

// enqueueTxWarmup is the number of unmeasured transactions before the
// measured ones: the pool's connections and the statements they prepare
// are set up by then.
const enqueueTxWarmup = 20

// EnqueueTx commits cfg.Transactions single-message transactions one after
// the other, with nothing dispatching, and reports the percentiles of their
// duration as the producer sees it: from before Begin to Commit returning
// (Target.Enqueue is exactly that transaction). PerSecond is the one
// producer's transactions per second.
func (h *Harness) EnqueueTx(ctx context.Context, sys System, rep int, cfg EnqueueTxConfig) (res report.Result, err error) {
	res = h.result(report.EnqueueTx, sys.Name, rep, cfg.Transactions)
	res.PerTx = 1
	if cfg.Transactions <= 0 {
		return res, errors.New("harness: enqueue-tx needs positive Transactions")
	}
	ctx, cancel := context.WithTimeoutCause(ctx, cfg.Timeout, fmt.Errorf("%w: enqueue-tx of %s exceeded %s", ErrTimeout, sys.Name, cfg.Timeout))
	defer cancel()
	took := make([]time.Duration, 0, cfg.Transactions)
	err = h.withTarget(ctx, sys, func(t Target) error {
		for i := range enqueueTxWarmup + cfg.Transactions {
			doc := payload.New(i, time.Now().UnixNano())
			t0 := time.Now()
			if err := t.Enqueue(ctx, []payload.Doc{doc}); err != nil {
				return fmt.Errorf("harness: transaction %d: %w", i, err)
			}
			if d := time.Since(t0); i >= enqueueTxWarmup {
				took = append(took, d)
			}
		}
		return nil
	})
	if err != nil {
		res.Error = err.Error()
		return res, err
	}
	var total time.Duration
	for _, d := range took {
		total += d
	}
	slices.Sort(took)
	res.Seconds = total.Seconds()
	res.PerSecond = float64(len(took)) / res.Seconds
	res.P50Ms = ms(Percentile(took, 50))
	res.P99Ms = ms(Percentile(took, 99))
	res.MaxMs = ms(took[len(took)-1])
	return res, nil
}
