package ops

import (
	"context"
	"fmt"

	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// PurgeTally adds up the passes of a purge.
type PurgeTally struct {
	Passes           int   `json:"passes"`
	PublishedDeleted int64 `json:"published_deleted"`
	DeadDeleted      int64 `json:"dead_deleted"`
	Expired          int64 `json:"expired"`
}

func (t *PurgeTally) add(r outbox.PurgeReport) {
	t.Passes++
	t.PublishedDeleted += r.PublishedDeleted
	t.DeadDeleted += r.DeadDeleted
	t.Expired += r.Expired
}

// full reports whether a pass reached its batch cap in any of its three
// statements, so that another pass may find more.
func full(r outbox.PurgeReport, batch int) bool {
	b := int64(batch)
	return r.PublishedDeleted >= b || r.DeadDeleted >= b || r.Expired >= b
}

// Purge runs one pass of s.Purge, or with loop, passes until one finds less
// than req.BatchSize rows for each of its statements (req.BatchSize must be
// positive). After each pass, progress (if not nil) receives the tally so
// far. On error the tally says what was done before it.
func Purge(ctx context.Context, s outbox.Store, req outboxdriver.PurgeRequest, loop bool, progress func(PurgeTally)) (PurgeTally, error) {
	if req.BatchSize <= 0 {
		return PurgeTally{}, fmt.Errorf("purge: batch size %d is not positive", req.BatchSize)
	}
	var t PurgeTally
	for {
		if err := ctx.Err(); err != nil {
			return t, fmt.Errorf("purge stopped after %d passes: %w", t.Passes, err)
		}
		r, err := s.Purge(ctx, req)
		if err != nil {
			return t, fmt.Errorf("purge pass %d: %w", t.Passes+1, err)
		}
		t.add(r)
		if progress != nil {
			progress(t)
		}
		if !loop || !full(r, req.BatchSize) {
			return t, nil
		}
	}
}
