package outboxsqltest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// SchemaErrorsArePermanent checks that a schema problem (the outbox table
// dropped) is a permanent store *Error for every operation, so that the
// dispatcher stops instead of retrying forever.
func (tg Target[T]) SchemaErrorsArePermanent(t *testing.T) {
	ctx := t.Context()
	s := tg.New(t)
	if _, err := s.DB().ExecContext(ctx, `DROP TABLE outbox`); err != nil {
		t.Fatal(err)
	}
	lease := []outboxdriver.Lease{{ID: reliar.NewMessageID()}}
	ids := []reliar.MessageID{reliar.NewMessageID()}
	zero := time.Duration(0)
	ops := []struct {
		name string
		call func(context.Context) error
	}{
		{"acquire", func(ctx context.Context) error { _, err := s.Acquire(ctx, AcquireRequest(1)); return err }},
		{"complete", func(ctx context.Context) error { _, err := s.Complete(ctx, lease); return err }},
		{"fail", func(ctx context.Context) error {
			_, err := s.Fail(ctx, []outboxdriver.FailedOutcome{{Lease: lease[0], Error: "x"}})
			return err
		}},
		{"release", func(ctx context.Context) error { _, err := s.Release(ctx, lease); return err }},
		{"extend", func(ctx context.Context) error { _, err := s.ExtendLease(ctx, lease, time.Second); return err }},
		{"purge", func(ctx context.Context) error {
			_, err := s.Purge(ctx, outboxdriver.PurgeRequest{PublishedRetention: &zero, DeadRetention: &zero})
			return err
		}},
		{"stats", func(ctx context.Context) error { _, err := s.Stats(ctx); return err }},
		{"list dead", func(ctx context.Context) error { _, err := s.ListDead(ctx, outboxdriver.DeadQuery{}); return err }},
		{"retry dead", func(ctx context.Context) error { _, err := s.RetryDead(ctx, ids); return err }},
		{"purge dead", func(ctx context.Context) error { _, err := s.PurgeDead(ctx, ids); return err }},
		{"enqueue", func(ctx context.Context) error { return Enqueue(ctx, s, NewMsgs(1)...) }},
	}
	for _, op := range ops {
		t.Run(op.name, func(t *testing.T) {
			err := op.call(ctx)
			if _, ok := tg.ErrorOp(err); !ok || !reliar.IsPermanent(err) {
				t.Fatalf("%v: want a permanent store *Error", err)
			}
			if err.Error() == "" || errors.Unwrap(err) == nil {
				t.Fatalf("error %#v has no text or cause", err)
			}
		})
	}
}
