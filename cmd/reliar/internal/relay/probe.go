package relay

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/reliar/reliar/cmd/reliar/internal/broker"
	"github.com/reliar/reliar/cmd/reliar/internal/storeurl"
)

// prober checks the store and the broker on an interval for /readyz, and
// logs when either goes down or comes back.
type prober struct {
	backend  storeurl.Backend
	broker   *broker.Broker
	ready    *readiness
	dests    *destinations
	interval time.Duration
	timeout  time.Duration
	log      *slog.Logger

	storeDown, brokerDown bool
}

// run probes at once and then every interval until ctx ends.
func (p *prober) run(ctx context.Context) {
	t := time.NewTicker(p.interval)
	defer t.Stop()
	for {
		p.once(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// once runs one probe of each.
func (p *prober) once(ctx context.Context) {
	pctx, cancel := context.WithTimeout(ctx, p.timeout)
	storeErr := probeStore(pctx, p.backend)
	if storeErr == nil {
		storeErr = probeStoreWrites(pctx, p.backend)
	}
	cancel()
	pctx, cancel = context.WithTimeout(ctx, p.timeout)
	brokerErr := p.broker.Check(pctx)
	cancel()
	if ctx.Err() != nil {
		return
	}
	if p.dests != nil && brokerErr == nil {
		pctx, cancel = context.WithTimeout(ctx, p.timeout)
		p.dests.recheck(pctx)
		cancel()
	}
	p.ready.probed(storeErr, brokerErr)
	p.storeDown = p.transition("store", p.storeDown, storeErr)
	p.brokerDown = p.transition("broker", p.brokerDown, brokerErr)
}

// transition logs a change of state and returns the new one.
func (p *prober) transition(what string, down bool, err error) bool {
	switch {
	case err != nil && !down:
		p.log.Warn("readiness: "+what+" unavailable", "error", err)
	case err == nil && down:
		p.log.Info("readiness: " + what + " available again")
	}
	return err != nil
}

// probeStore checks that the database answers and the outbox table is
// there, in a transaction rolled back at once.
func probeStore(ctx context.Context, b storeurl.Backend) error {
	tx, err := b.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
		defer cancel()
		_ = tx.Rollback(rctx)
	}()
	if err := tx.Exec(ctx, "SELECT 1 FROM "+b.Dialect().Table("outbox")+" WHERE 1 = 0"); err != nil {
		return fmt.Errorf("outbox table: %w", err)
	}
	return nil
}
