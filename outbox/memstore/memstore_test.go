package memstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
	"github.com/reliar/reliar/outbox/storetest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// harness wraps a fresh store in the conformance suite's hooks.
func harness(t *testing.T) storetest.Harness {
	s := newMemStore()
	return storetest.Harness{
		Store: s,
		Enqueue: func(ctx context.Context, msgs ...reliar.Outgoing) error {
			_, err := s.Enqueue(ctx, msgs...)
			return err
		},
		InsertRow: func(_ context.Context, r outboxdriver.Row) error { return s.InsertRow(r) },
		Inspect: func(_ context.Context, id reliar.MessageID) (storetest.RowState, error) {
			st, ok := s.Inspect(id)
			if !ok {
				return storetest.RowState{}, storetest.ErrNoRow
			}
			return st, nil
		},
		Advance: func(_ context.Context, d time.Duration) error {
			s.Advance(d)
			return nil
		},
	}
}

func TestConformance(t *testing.T) {
	storetest.Run(t, harness)
}

// The differential test against memstore itself: the run must be
// deterministic for a seed, or it could not tell a store's difference from
// its own noise.
func TestDifferentialAgainstItself(t *testing.T) {
	storetest.Differential(t, harness, storetest.DifferentialOptions{Steps: 3000})
}
