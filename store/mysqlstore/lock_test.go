package mysqlstore_test

import (
	"testing"

	"github.com/reliar/reliar/store/mysqlstore"
)

// The maintenance lock admits one holder per database, across handles, and
// is free again after unlock; stores on other databases do not contend.
func TestMaintenanceLock(t *testing.T) {
	ctx := t.Context()
	db, cfg := newDB(t)
	a, err := mysqlstore.New(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	b, err := mysqlstore.New(ctx, openDB(t, cfg))
	if err != nil {
		t.Fatal(err)
	}
	other := newStore(t)

	unlock, ok, err := a.TryLockMaintenance(ctx)
	if err != nil || !ok {
		t.Fatalf("first lock: %v, %v", ok, err)
	}
	if _, ok, err := b.TryLockMaintenance(ctx); err != nil || ok {
		t.Fatalf("second lock on the same database: %v, %v; want refused", ok, err)
	}
	otherUnlock, ok, err := other.TryLockMaintenance(ctx)
	if err != nil || !ok {
		t.Fatalf("lock on another database: %v, %v", ok, err)
	}
	otherUnlock()
	unlock()
	unlock() // idempotent
	unlockB, ok, err := b.TryLockMaintenance(ctx)
	if err != nil || !ok {
		t.Fatalf("lock after unlock: %v, %v", ok, err)
	}
	unlockB()
}
