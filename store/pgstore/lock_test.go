package pgstore

import (
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
)

func TestMaintenanceLockIsExclusive(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	a := newStore(t)
	b, err := New(ctx, sharedPool, WithSchema(a.Schema()), WithLogger(quietLogger()))
	if err != nil {
		t.Fatal(err)
	}
	other := newStore(t)

	unlockA, ok, err := a.TryLockMaintenance(ctx)
	if err != nil || !ok {
		t.Fatalf("first lock = %v, %v; want taken", ok, err)
	}
	if _, ok, err := b.TryLockMaintenance(ctx); err != nil || ok {
		t.Fatalf("second lock on the same table = %v, %v; want refused", ok, err)
	}
	unlockOther, ok, err := other.TryLockMaintenance(ctx)
	if err != nil || !ok {
		t.Fatalf("lock on another schema's table = %v, %v; want taken", ok, err)
	}
	unlockOther()

	unlockA()
	unlockA() // idempotent
	unlockB, ok, err := b.TryLockMaintenance(ctx)
	if err != nil || !ok {
		t.Fatalf("lock after unlock = %v, %v; want taken", ok, err)
	}
	unlockB()
}

// A maintainer that crashed leaves its lease row behind; another takes the
// lease over once it has expired, and not before.
func TestMaintenanceLeaseTakenOverAfterCrash(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := newStore(t)
	crashed := uuid.New()
	if _, err := sharedPool.Exec(ctx, s.n.render(`INSERT INTO {{schema}}.reliar_leases (name, holder, expires_at)
VALUES ('maintenance', $1, clock_timestamp() + interval '1 second')`), crashed); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.TryLockMaintenance(ctx); err != nil || ok {
		t.Fatalf("lock while a crashed holder's lease runs = %v, %v; want refused", ok, err)
	}
	if _, err := sharedPool.Exec(ctx, s.n.render(`UPDATE {{schema}}.reliar_leases SET expires_at = clock_timestamp() - interval '1 millisecond'`)); err != nil {
		t.Fatal(err)
	}
	unlock, ok, err := s.TryLockMaintenance(ctx)
	if err != nil || !ok {
		t.Fatalf("lock after the crashed holder's lease expired = %v, %v; want taken", ok, err)
	}
	var holder uuid.UUID
	if err := sharedPool.QueryRow(ctx, s.n.render(`SELECT holder FROM {{schema}}.reliar_leases`)).Scan(&holder); err != nil {
		t.Fatal(err)
	}
	if holder == crashed {
		t.Fatal("the lease still names the crashed holder")
	}
	unlock()
	if n := leaseRows(t, s); n != 0 {
		t.Fatalf("%d lease rows after unlock; want 0", n)
	}
}

// The holder renews its lease while it works, so a lease shorter than the
// work is not taken over.
func TestMaintenanceLeaseRenewedWhileHeld(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	a := newStore(t, WithMaintenanceLease(3*time.Second))
	b, err := New(ctx, sharedPool, WithSchema(a.Schema()), WithLogger(quietLogger()))
	if err != nil {
		t.Fatal(err)
	}
	unlock, ok, err := a.TryLockMaintenance(ctx)
	if err != nil || !ok {
		t.Fatalf("lock = %v, %v", ok, err)
	}
	defer unlock()
	time.Sleep(7 * time.Second) // more than two leases
	if _, ok, err := b.TryLockMaintenance(ctx); err != nil || ok {
		t.Fatalf("lock while the holder renews = %v, %v; want refused", ok, err)
	}
}

func TestMaintenanceLeaseOption(t *testing.T) {
	if _, err := applyOptions([]Option{WithMaintenanceLease(time.Millisecond)}); !errors.Is(err, ErrInvalidOption) {
		t.Fatalf("WithMaintenanceLease(1ms) = %v; want ErrInvalidOption", err)
	}
}

func leaseRows(t *testing.T, s *Store) int {
	t.Helper()
	var n int
	if err := sharedPool.QueryRow(t.Context(), s.n.render(`SELECT count(*) FROM {{schema}}.reliar_leases`)).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
