package sqlitestore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/outbox/storetest"
)

// TestConformance runs the store contract's suite, each subtest on a fresh
// database file of its own.
func TestConformance(t *testing.T) {
	storetest.Run(t, harness)
}

// harness is the storetest harness of a fresh store.
func harness(t *testing.T) storetest.Harness {
	s := newStore(t)
	db := s.DB()
	return storetest.Harness{
		Store: s,
		Enqueue: func(ctx context.Context, msgs ...reliar.Outgoing) error {
			return enqueue(ctx, s, msgs...)
		},
		InsertRow: func(ctx context.Context, r outbox.Row) error { return insertRow(ctx, db, r) },
		Inspect: func(ctx context.Context, id reliar.MessageID) (storetest.RowState, error) {
			st, err := inspect(ctx, db, id)
			if errors.Is(err, errNoRow) {
				return storetest.RowState{}, storetest.ErrNoRow
			}
			return storetest.RowState(st), err
		},
		Advance: func(ctx context.Context, d time.Duration) error { return advance(ctx, db, d) },
	}
}
