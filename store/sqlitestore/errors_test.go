package sqlitestore_test

import (
	"context"
	"errors"
	"testing"

	"github.com/reliar/reliar"
)

// A schema problem (here the table is gone) is a permanent error for every
// operation, so the dispatcher stops instead of retrying forever.
func TestSchemaErrorsArePermanent(t *testing.T) { target.SchemaErrorsArePermanent(t) }

// A cancelled context fails an operation transiently.
func TestCancelledContextIsTransient(t *testing.T) {
	s := newStore(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := s.Acquire(ctx, acquireReq(1))
	if err == nil || reliar.IsPermanent(err) || !errors.Is(err, context.Canceled) {
		t.Fatalf("Acquire with a cancelled context: %v", err)
	}
	_, err = s.Stats(ctx)
	if err == nil || reliar.IsPermanent(err) {
		t.Fatalf("Stats with a cancelled context: %v", err)
	}
}
