package harness

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/reliar/reliar/bench/internal/pgenv"
)

// Harness runs scenarios against a PostgreSQL database.
type Harness struct {
	// DSN is the database every run creates its schema in.
	DSN string
	// Quick marks the results of a reduced run.
	Quick bool
	// Around, when set, is called as the timed part of a drain run starts;
	// the function it returns is called when it ends. The peers command
	// uses it to take CPU profiles.
	Around func(system string, rep int) (end func())
}

// TeardownTimeout bounds stopping a system and dropping its schema.
const TeardownTimeout = 30 * time.Second

// withTarget sets sys up on a fresh schema, hands it to run, and tears
// everything down afterwards, whatever run returned.
func (h *Harness) withTarget(ctx context.Context, sys System, run func(Target) error) (err error) {
	env, drop, err := pgenv.Fresh(ctx, h.DSN, sys.Name)
	if err != nil {
		return err
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), TeardownTimeout)
		defer cancel()
		err = errors.Join(err, drop(dctx))
	}()
	t, err := sys.Open(ctx, env)
	if err != nil {
		return fmt.Errorf("harness: set up %s: %w", sys.Name, err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), TeardownTimeout)
		defer cancel()
		err = errors.Join(err, t.Close(cctx))
	}()
	return run(t)
}

// stopTarget calls stop with a bounded context of its own.
func stopTarget(ctx context.Context, stop func(context.Context) error) error {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), TeardownTimeout)
	defer cancel()
	if err := stop(sctx); err != nil {
		return fmt.Errorf("harness: stop: %w", err)
	}
	return nil
}
