package pgstore

import (
	"testing"
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

// A lock whose session died is released by PostgreSQL; unlock then closes
// the dead connection instead of returning it to the pool.
func TestMaintenanceLockLostWithItsSession(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool, app := dedicatedPool(t, 2)
	s := newStoreOn(t, pool)
	unlock, ok, err := s.TryLockMaintenance(ctx)
	if err != nil || !ok {
		t.Fatalf("lock = %v, %v", ok, err)
	}
	if _, err := sharedPool.Exec(ctx, `SELECT pg_terminate_backend(pid, 5000) FROM pg_catalog.pg_stat_activity
WHERE application_name = $1 AND pid IN (SELECT pid FROM pg_catalog.pg_locks WHERE locktype = 'advisory')`, app); err != nil {
		t.Fatal(err)
	}
	unlock()
	other, err := New(ctx, sharedPool, WithSchema(s.Schema()), WithLogger(quietLogger()))
	if err != nil {
		t.Fatal(err)
	}
	unlock2, ok, err := other.TryLockMaintenance(ctx)
	if err != nil || !ok {
		t.Fatalf("lock after its holder died = %v, %v; want taken", ok, err)
	}
	unlock2()
}
