package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/reliar/reliar/bench/internal/pgenv"
)

// Harness runs scenarios against a PostgreSQL database.
type Harness struct {
	// DSN is the database every run creates its schema in.
	DSN string
	// Quick marks the results of a reduced run.
	Quick bool
	// FileDir is where the runs of systems on a database file get their
	// fresh directories; empty means os.TempDir(). It should be on the disk
	// a user's database would be on: a RAM disk hides every fsync.
	FileDir string
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
	env, drop, err := h.fresh(ctx, sys)
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

// fresh makes the run's schema, or its directory for a system on a file.
func (h *Harness) fresh(ctx context.Context, sys System) (pgenv.Env, func(context.Context) error, error) {
	if !sys.OnFile {
		return pgenv.Fresh(ctx, h.DSN, sys.Name)
	}
	dir, err := os.MkdirTemp(h.FileDir, "reliar-bench-")
	if err != nil {
		return pgenv.Env{}, nil, fmt.Errorf("harness: directory for %s: %w", sys.Name, err)
	}
	return pgenv.Env{Dir: dir}, func(context.Context) error {
		if err := os.RemoveAll(dir); err != nil {
			return fmt.Errorf("harness: remove %s: %w", dir, err)
		}
		return nil
	}, nil
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
