package harness

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/reliar/reliar/bench/internal/sink"
)

// ErrTimeout is returned when a run does not finish within its bound.
var ErrTimeout = errors.New("harness: run did not finish in time")

// donePoll is how often the tail of a run polls the database for rows not
// yet marked done, once the sink has every message.
const donePoll = 2 * time.Millisecond

// waitDone waits for s to have every message and then for t to have marked
// them all done, polling every donePoll.
func waitDone(ctx context.Context, t Target, s *sink.Sink) error {
	select {
	case <-s.Done():
	case <-ctx.Done():
		return fmt.Errorf("%w (%d of %d messages arrived)", context.Cause(ctx), s.Received(), s.Size())
	}
	tick := time.NewTicker(donePoll)
	defer tick.Stop()
	for {
		n, err := t.Pending(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("%w (every message arrived, not all marked done)", context.Cause(ctx))
			}
			return fmt.Errorf("harness: count pending: %w", err)
		}
		if n == 0 {
			return nil
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return fmt.Errorf("%w (every message arrived, %d not marked done)", context.Cause(ctx), n)
		}
	}
}
