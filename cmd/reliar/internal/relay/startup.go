package relay

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/cmd/reliar/internal/broker"
	"github.com/reliar/reliar/cmd/reliar/internal/exitcode"
	"github.com/reliar/reliar/cmd/reliar/internal/storeurl"
	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// setupTimeout bounds each start-up step: connecting, migrating, opening
// the store, connecting to the broker.
const setupTimeout = 30 * time.Second

// deps are what start-up opened; close releases them.
type deps struct {
	backend  storeurl.Backend
	migrated bool
	store    outbox.Store
	broker   *broker.Broker
}

// connect opens the store and the broker, trying again every retry
// interval while the database is unreachable, the schema is not migrated
// or the broker does not answer, and reports why on /readyz meanwhile. It
// returns nil, nil when ctx ends first; an error for bad input (exit status
// 2) or a failure that retrying cannot fix (exit status 1).
func connect(ctx context.Context, cfg Config, ready *readiness, log *slog.Logger) (*deps, error) {
	d := &deps{}
	var last string
	for {
		err := d.step(ctx, cfg)
		if err == nil {
			return d, nil
		}
		switch {
		case ctx.Err() != nil:
			d.close(log)
			return nil, nil
		case badInput(err):
			d.close(log)
			return nil, exitcode.UsageError(err)
		case reliar.IsPermanent(err) && !notMigrated(err):
			d.close(log)
			return nil, exitcode.FailureError(err)
		}
		ready.waiting(err)
		if msg := err.Error(); msg != last {
			last = msg
			log.Warn("relay waiting to start; retrying", "error", err, "every", cfg.retryInterval())
		} else {
			log.Debug("relay still waiting to start", "error", err)
		}
		select {
		case <-ctx.Done():
			d.close(log)
			return nil, nil
		case <-time.After(cfg.retryInterval()):
		}
	}
}

// step takes start-up as far as it goes: broker, database, migrations,
// store. What succeeded is kept for the next attempt.
func (d *deps) step(ctx context.Context, cfg Config) error {
	ctx, cancel := context.WithTimeout(ctx, setupTimeout)
	defer cancel()
	// The broker first: its options are checked as it opens, and bad ones
	// must stop the relay before it touches the database.
	if d.broker == nil {
		b, err := cfg.Broker.Open(ctx)
		if err != nil {
			return fmt.Errorf("broker: %w", err)
		}
		d.broker = b
	}
	if d.backend == nil {
		b, err := cfg.Store.Open(ctx, cfg.StoreOptions)
		if err != nil {
			return fmt.Errorf("store: %w", err)
		}
		d.backend = b
	}
	if cfg.Migrate && !d.migrated {
		m, err := d.backend.Migrate(ctx)
		if err != nil {
			return fmt.Errorf("store: migrate: %w", err)
		}
		d.migrated = true
		cfg.logger().Info("migrated", "store", d.backend.Describe(), "from", m.From, "to", m.To)
	}
	if d.store == nil {
		s, err := d.backend.Store(ctx)
		if err != nil {
			return fmt.Errorf("store: %w", storeurl.NotMigrated(d.backend.Describe(), err))
		}
		d.store = s
	}
	return nil
}

// close releases the broker, then the database, bounded in time.
func (d *deps) close(log *slog.Logger) {
	if d.broker != nil {
		if err := d.broker.Close(); err != nil {
			log.Warn("close broker", "error", err)
		}
	}
	if d.backend != nil {
		ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		defer cancel()
		if err := d.backend.Close(ctx); err != nil {
			log.Warn("close store", "error", err)
		}
	}
}

// badInput reports errors about the relay's input: URLs and options.
func badInput(err error) bool {
	for _, target := range []error{storeurl.ErrBadURL, storeurl.ErrBadOption, broker.ErrBadURL, broker.ErrBadOption, ErrInvalidConfig} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// notMigrated reports a schema that is not migrated yet, in any store.
func notMigrated(err error) bool {
	return errors.Is(err, outboxdriver.ErrNotMigrated)
}
