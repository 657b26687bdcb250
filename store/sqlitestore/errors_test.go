package sqlitestore_test

import (
	"context"
	"errors"
	"testing"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/store/sqlitestore"
)

// A schema problem (here the table is gone) is a permanent error for every
// operation, so the dispatcher stops instead of retrying forever.
func TestSchemaErrorsArePermanent(t *testing.T) {
	ctx := t.Context()
	s := newStore(t)
	if _, err := s.DB().ExecContext(ctx, `DROP TABLE outbox`); err != nil {
		t.Fatal(err)
	}
	lease := []outbox.Lease{{ID: reliar.NewMessageID()}}
	ids := []reliar.MessageID{reliar.NewMessageID()}
	ops := []struct {
		name string
		call func(context.Context) error
	}{
		{"acquire", func(ctx context.Context) error { _, err := s.Acquire(ctx, acquireReq(1)); return err }},
		{"complete", func(ctx context.Context) error { _, err := s.Complete(ctx, lease); return err }},
		{"fail", func(ctx context.Context) error {
			_, err := s.Fail(ctx, []outbox.FailedOutcome{{Lease: lease[0], Error: "x"}})
			return err
		}},
		{"release", func(ctx context.Context) error { _, err := s.Release(ctx, lease); return err }},
		{"extend", func(ctx context.Context) error { _, err := s.ExtendLease(ctx, lease, 1); return err }},
		{"purge", func(ctx context.Context) error { _, err := s.Purge(ctx, purgeAll()); return err }},
		{"stats", func(ctx context.Context) error { _, err := s.Stats(ctx); return err }},
		{"list dead", func(ctx context.Context) error { _, err := s.ListDead(ctx, outbox.DeadQuery{}); return err }},
		{"retry dead", func(ctx context.Context) error { _, err := s.RetryDead(ctx, ids); return err }},
		{"purge dead", func(ctx context.Context) error { _, err := s.PurgeDead(ctx, ids); return err }},
		{"enqueue", func(ctx context.Context) error { return enqueue(ctx, s, newMsgs(1)...) }},
	}
	for _, op := range ops {
		t.Run(op.name, func(t *testing.T) {
			err := op.call(ctx)
			var se *sqlitestore.Error
			if !errors.As(err, &se) || !reliar.IsPermanent(err) {
				t.Fatalf("%v: want a permanent *sqlitestore.Error", err)
			}
			if se.Error() == "" || se.Unwrap() == nil {
				t.Fatalf("error %#v has no text or cause", se)
			}
		})
	}
}

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
