package pgstore

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

func TestOptionsValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		opt  Option
	}{
		{"bad schema", WithSchema("no way")},
		{"zero payload limit", WithMaxPayloadBytes(0)},
		{"nil serializer", WithSerializer(nil)},
		{"negative timeout", WithStatementTimeout(-time.Second)},
		{"nil logger", WithLogger(nil)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := New(t.Context(), sharedPool, tt.opt); !errors.Is(err, ErrInvalidOption) {
				t.Fatalf("New = %v, want ErrInvalidOption", err)
			}
		})
	}
	if _, err := New(t.Context(), nil); err == nil {
		t.Error("New with a nil pool succeeded")
	}
}

func TestNewWarnsAboutOtherOutboxTables(t *testing.T) {
	t.Parallel()
	a := newStore(t)
	newStore(t) // another schema with an outbox table
	var buf bytes.Buffer
	_, err := New(t.Context(), sharedPool, WithSchema(a.Schema()),
		WithLogger(slog.New(slog.NewTextHandler(&buf, nil))))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "a table named outbox also exists in other schemas") {
		t.Fatalf("no warning logged: %q", buf.String())
	}
}

func TestCapabilitiesAndNames(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	want := outboxdriver.Capabilities{PerKeyOrdering: true, Notify: true, MaintenanceLock: true, TenantFairness: true, Handoff: true, ClaimAfter: true}
	if got := s.Capabilities(); got != want {
		t.Errorf("Capabilities = %+v, want %+v", got, want)
	}
	if s.Channel() != "reliar."+s.Schema()+".outbox" {
		t.Errorf("Channel = %q", s.Channel())
	}
}

// A worker whose lease lapsed and was reclaimed by another writes nothing:
// every outcome is fenced by the lease token.
func TestStaleOutcomeAfterLeaseLossAffectsNothing(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := t.Context()
	id := enqueue(t, s, reliar.NewMsg(orderPlaced{"o-1"}))[0]
	old, err := s.Acquire(ctx, outboxdriver.AcquireRequest{Worker: "slow", BatchSize: 1, Lease: time.Minute})
	if err != nil || len(old.Records) != 1 {
		t.Fatalf("claim = %v, %v", old, err)
	}
	if _, err := sharedPool.Exec(ctx, s.n.render(`UPDATE {{table}} SET locked_until = now() - interval '1 second'`)); err != nil {
		t.Fatal(err)
	}
	fresh, err := s.Acquire(ctx, outboxdriver.AcquireRequest{Worker: "fast", BatchSize: 1, Lease: time.Minute})
	if err != nil || len(fresh.Records) != 1 || !fresh.Records[0].Reclaimed {
		t.Fatalf("reclaim = %+v, %v", fresh, err)
	}
	stale := old.Records[0].Lease()
	for name, op := range map[string]func() (int64, error){
		"Complete": func() (int64, error) { return s.Complete(ctx, []outboxdriver.Lease{stale}) },
		"Fail":     func() (int64, error) { return s.Fail(ctx, []outboxdriver.FailedOutcome{{Lease: stale, Error: "x"}}) },
		"Fail dead": func() (int64, error) {
			return s.Fail(ctx, []outboxdriver.FailedOutcome{{Lease: stale, Error: "x", DeadReason: outboxdriver.DeadPermanent}})
		},
		"Release":     func() (int64, error) { return s.Release(ctx, []outboxdriver.Lease{stale}) },
		"ExtendLease": func() (int64, error) { return s.ExtendLease(ctx, []outboxdriver.Lease{stale}, time.Hour) },
	} {
		if n, err := op(); err != nil || n != 0 {
			t.Errorf("stale %s = %d, %v; want 0 rows", name, n, err)
		}
	}
	if n := countRows(t, s, "locked_by = 'fast' AND published_at IS NULL AND dead_at IS NULL AND attempts = 0"); n != 1 {
		t.Fatalf("the fresh claim of %s was disturbed", id)
	}
	if n, err := s.Complete(ctx, []outboxdriver.Lease{fresh.Records[0].Lease()}); err != nil || n != 1 {
		t.Fatalf("fresh Complete = %d, %v", n, err)
	}
}

func TestRequestValidation(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := t.Context()
	if _, err := s.Acquire(ctx, outboxdriver.AcquireRequest{BatchSize: 0, Lease: time.Second}); !reliar.IsPermanent(err) {
		t.Errorf("Acquire with BatchSize 0 = %v, want a permanent error", err)
	}
	if _, err := s.Acquire(ctx, outboxdriver.AcquireRequest{BatchSize: 1}); !reliar.IsPermanent(err) {
		t.Errorf("Acquire without a lease = %v, want a permanent error", err)
	}
	lease := outboxdriver.Lease{ID: reliar.NewMessageID(), Token: reliar.NewMessageID()}
	if _, err := s.Fail(ctx, []outboxdriver.FailedOutcome{{Lease: lease, DeadReason: "bored"}}); !reliar.IsPermanent(err) {
		t.Errorf("Fail with an unknown reason = %v, want a permanent error", err)
	}
	if _, err := s.ExtendLease(ctx, []outboxdriver.Lease{lease}, 0); !reliar.IsPermanent(err) {
		t.Errorf("ExtendLease by 0 = %v, want a permanent error", err)
	}
	for name, op := range map[string]func() (int64, error){
		"Complete":    func() (int64, error) { return s.Complete(ctx, nil) },
		"Fail":        func() (int64, error) { return s.Fail(ctx, nil) },
		"Release":     func() (int64, error) { return s.Release(ctx, nil) },
		"ExtendLease": func() (int64, error) { return s.ExtendLease(ctx, nil, time.Second) },
		"RetryDead":   func() (int64, error) { return s.RetryDead(ctx, nil) },
		"PurgeDead":   func() (int64, error) { return s.PurgeDead(ctx, nil) },
	} {
		if n, err := op(); n != 0 || err != nil {
			t.Errorf("%s of nothing = %d, %v", name, n, err)
		}
	}
}
