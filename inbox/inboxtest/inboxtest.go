// Package inboxtest is the conformance suite every inbox.Marker passes. An
// implementation calls Run from its own tests with a factory of fresh,
// isolated harnesses.
package inboxtest

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/inbox"
)

// Harness is one fresh inbox and the hooks the suite needs around it.
type Harness[Tx any] struct {
	// Marker is the inbox under test.
	Marker inbox.Marker[Tx]
	// Begin, Commit and Rollback manage the consumer's transactions.
	Begin    func(ctx context.Context) (Tx, error)
	Commit   func(tx Tx) error
	Rollback func(tx Tx) error
	// Effect writes a business effect (a row holding value) in tx, so the
	// suite can check that effects and records commit together.
	Effect func(ctx context.Context, tx Tx, value string) error
	// Effects returns the committed effects' values.
	Effects func(ctx context.Context) ([]string, error)
	// Advance makes every processed record look d older.
	Advance func(ctx context.Context, d time.Duration) error
}

// Run runs every rule of the inbox contract as a parallel subtest, each on
// a fresh harness.
func Run[Tx any](t *testing.T, newHarness func(t *testing.T) Harness[Tx]) {
	t.Helper()
	for _, c := range []struct {
		name string
		run  func(t *testing.T, h Harness[Tx])
	}{
		{"FirstDeliveryRunsAndCommitsWithTheEffect", firstDelivery[Tx]},
		{"DuplicateIsSkipped", duplicateSkipped[Tx]},
		{"ConsumersAreIndependent", consumersIndependent[Tx]},
		{"RollbackLeavesNoRecord", rollbackLeavesNoRecord[Tx]},
		{"HandlerErrorIsReturnedAndRetried", handlerError[Tx]},
		{"ConcurrentDeliveriesRunOnce", concurrentDeliveries[Tx]},
		{"PurgeKeepsRecentRecords", purge[Tx]},
		{"InvalidInputIsRefused", invalidInput[Tx]},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, newHarness(t))
		})
	}
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// deliver processes one delivery in its own transaction, writing value as
// the business effect, and commits unless processing failed.
func deliver[Tx any](ctx context.Context, h Harness[Tx], consumer string, id reliar.MessageID, value string) (ran bool, err error) {
	tx, err := h.Begin(ctx)
	if err != nil {
		return false, err
	}
	err = inbox.Process(ctx, h.Marker, tx, consumer, id, func(ctx context.Context) error {
		ran = true
		return h.Effect(ctx, tx, value)
	})
	if err != nil && !errors.Is(err, inbox.ErrAlreadyProcessed) {
		_ = h.Rollback(tx)
		return ran, err
	}
	if cerr := h.Commit(tx); cerr != nil {
		return ran, cerr
	}
	return ran, err
}

func effects[Tx any](t *testing.T, ctx context.Context, h Harness[Tx]) []string {
	t.Helper()
	got, err := h.Effects(ctx)
	if err != nil {
		t.Fatalf("Effects: %v", err)
	}
	slices.Sort(got)
	return got
}

func firstDelivery[Tx any](t *testing.T, h Harness[Tx]) {
	ctx := ctxFor(t)
	ran, err := deliver(ctx, h, "billing", reliar.NewMessageID(), "a")
	if err != nil || !ran {
		t.Fatalf("first delivery: ran %v err %v", ran, err)
	}
	if got := effects(t, ctx, h); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("effects %v, want [a]", got)
	}
}

func duplicateSkipped[Tx any](t *testing.T, h Harness[Tx]) {
	ctx := ctxFor(t)
	id := reliar.NewMessageID()
	if _, err := deliver(ctx, h, "billing", id, "a"); err != nil {
		t.Fatal(err)
	}
	ran, err := deliver(ctx, h, "billing", id, "b")
	if ran || !errors.Is(err, inbox.ErrAlreadyProcessed) {
		t.Fatalf("duplicate: ran %v err %v, want skipped with ErrAlreadyProcessed", ran, err)
	}
	if got := effects(t, ctx, h); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("effects %v, want [a]", got)
	}
}

func consumersIndependent[Tx any](t *testing.T, h Harness[Tx]) {
	ctx := ctxFor(t)
	id := reliar.NewMessageID()
	for _, c := range []string{"billing", "shipping"} {
		if ran, err := deliver(ctx, h, c, id, c); !ran || err != nil {
			t.Fatalf("consumer %s: ran %v err %v", c, ran, err)
		}
	}
	if got := effects(t, ctx, h); !slices.Equal(got, []string{"billing", "shipping"}) {
		t.Fatalf("effects %v", got)
	}
}

func rollbackLeavesNoRecord[Tx any](t *testing.T, h Harness[Tx]) {
	ctx := ctxFor(t)
	id := reliar.NewMessageID()
	tx, err := h.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := inbox.Process(ctx, h.Marker, tx, "billing", id, func(ctx context.Context) error { return h.Effect(ctx, tx, "lost") }); err != nil {
		t.Fatal(err)
	}
	if err := h.Rollback(tx); err != nil {
		t.Fatal(err)
	}
	if ran, err := deliver(ctx, h, "billing", id, "redelivered"); !ran || err != nil {
		t.Fatalf("redelivery after rollback: ran %v err %v, want processed", ran, err)
	}
	if got := effects(t, ctx, h); !slices.Equal(got, []string{"redelivered"}) {
		t.Fatalf("effects %v, want [redelivered]", got)
	}
}

func handlerError[Tx any](t *testing.T, h Harness[Tx]) {
	ctx := ctxFor(t)
	id := reliar.NewMessageID()
	boom := errors.New("downstream unavailable")
	tx, err := h.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	err = inbox.Process(ctx, h.Marker, tx, "billing", id, func(ctx context.Context) error {
		if err := h.Effect(ctx, tx, "half"); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Process = %v, want the handler's error", err)
	}
	if err := h.Rollback(tx); err != nil {
		t.Fatal(err)
	}
	if ran, err := deliver(ctx, h, "billing", id, "whole"); !ran || err != nil {
		t.Fatalf("retry: ran %v err %v", ran, err)
	}
	if got := effects(t, ctx, h); !slices.Equal(got, []string{"whole"}) {
		t.Fatalf("effects %v, want [whole]", got)
	}
}

func concurrentDeliveries[Tx any](t *testing.T, h Harness[Tx]) {
	ctx := ctxFor(t)
	const deliveries = 8
	for round := range 5 {
		id := reliar.NewMessageID()
		var (
			wg   sync.WaitGroup
			mu   sync.Mutex
			runs int
			dups int
			errs []error
		)
		for range deliveries {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ran, err := deliver(ctx, h, "billing", id, id.String())
				mu.Lock()
				defer mu.Unlock()
				switch {
				case errors.Is(err, inbox.ErrAlreadyProcessed):
					dups++
				case err != nil:
					errs = append(errs, err)
				}
				if ran {
					runs++
				}
			}()
		}
		wg.Wait()
		if runs != 1 || dups != deliveries-1 || len(errs) != 0 {
			t.Fatalf("round %d: %d runs, %d duplicates, errors %v; want 1 run and %d duplicates", round, runs, dups, errs, deliveries-1)
		}
	}
	if got := effects(t, ctx, h); len(got) != 5 {
		t.Fatalf("%d effects, want 5", len(got))
	}
}

func purge[Tx any](t *testing.T, h Harness[Tx]) {
	ctx := ctxFor(t)
	old := make([]reliar.MessageID, 5)
	for i := range old {
		old[i] = reliar.NewMessageID()
		if _, err := deliver(ctx, h, "billing", old[i], "old"); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.Advance(ctx, 15*24*time.Hour); err != nil {
		t.Fatal(err)
	}
	recent := reliar.NewMessageID()
	if _, err := deliver(ctx, h, "billing", recent, "recent"); err != nil {
		t.Fatal(err)
	}
	n, err := h.Marker.PurgeProcessed(ctx, inbox.DefaultRetention, 3)
	if err != nil || n != 3 {
		t.Fatalf("first purge deleted %d (%v), want the limit of 3", n, err)
	}
	n, err = h.Marker.PurgeProcessed(ctx, inbox.DefaultRetention, 100)
	if err != nil || n != 2 {
		t.Fatalf("second purge deleted %d (%v), want the remaining 2", n, err)
	}
	if _, err := deliver(ctx, h, "billing", recent, "again"); !errors.Is(err, inbox.ErrAlreadyProcessed) {
		t.Fatalf("a recent record was purged: %v", err)
	}
	if ran, err := deliver(ctx, h, "billing", old[0], "old-again"); !ran || err != nil {
		t.Fatalf("purged record still blocks: ran %v err %v", ran, err)
	}
}

func invalidInput[Tx any](t *testing.T, h Harness[Tx]) {
	ctx := ctxFor(t)
	for _, consumer := range []string{"", "bad\x00name", string(make([]byte, 201)), "caf\xe9"} {
		tx, err := h.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		err = inbox.Process(ctx, h.Marker, tx, consumer, reliar.NewMessageID(), func(context.Context) error {
			t.Error("handler ran for an invalid consumer name")
			return nil
		})
		_ = h.Rollback(tx)
		if err == nil {
			t.Fatalf("consumer %q accepted", consumer)
		}
	}
	tx, err := h.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Rollback(tx)
	if err := inbox.Process(ctx, h.Marker, tx, "billing", reliar.MessageID{}, func(context.Context) error { return nil }); err == nil {
		t.Fatal("nil message id accepted")
	}
}
