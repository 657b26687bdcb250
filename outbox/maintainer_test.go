package outbox_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/inbox"
	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

func TestMaintainerPurgesAndExpires(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newFaultStore()
		ctx := context.Background()
		// 30 rows published, 5 dead, 2 expiring, all two days old.
		enqueue(t, store.Store, 35)
		exp := time.Now().Add(time.Hour)
		expiring := reliar.NewMsg(order{})
		expiring.Metadata.Delivery.ExpiresAt = &exp
		expiring2 := reliar.NewMsg(order{})
		expiring2.Metadata.Delivery.ExpiresAt = &exp
		if _, err := store.Enqueue(ctx, expiring, expiring2); err != nil {
			t.Fatal(err)
		}
		b, err := store.Store.Acquire(ctx, outboxdriver.AcquireRequest{Worker: "w", BatchSize: 35, Lease: time.Minute, MaxClaims: 5})
		if err != nil || len(b.Records) != 35 {
			t.Fatalf("claim: %d %v", len(b.Records), err)
		}
		var ok []outboxdriver.Lease
		var dead []outboxdriver.FailedOutcome
		for i, r := range b.Records {
			if i < 30 {
				ok = append(ok, r.Lease())
			} else {
				dead = append(dead, outboxdriver.FailedOutcome{Lease: r.Lease(), Error: "no", DeadReason: outbox.DeadPermanent})
			}
		}
		store.Complete(ctx, ok)
		store.Fail(ctx, dead)
		time.Sleep(15 * 24 * time.Hour)

		settings := outbox.DefaultMaintainerSettings()
		settings.BatchSize = 7
		m := newCountingMetrics()
		mt, err := outbox.NewMaintainer(store, settings, outbox.MaintainerMetrics(m))
		if err != nil {
			t.Fatal(err)
		}
		r, err := mt.RunOnce(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if r.PublishedDeleted != 30 || r.DeadDeleted != 5 || r.Expired != 2 {
			t.Fatalf("report %+v, want 30 published, 5 dead deleted, 2 expired", r)
		}
		if m.snapshot().dead[outbox.DeadExpired] != 2 {
			t.Fatalf("expired not counted: %v", m.snapshot().dead)
		}
		st, _ := store.Stats(ctx)
		if st.Dead != 2 || st.Pending != 0 {
			t.Fatalf("after purge: %+v", st)
		}
	})
}

func TestMaintainerRunStopsOnCancelAndHoldsTheLock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newFaultStore()
		unlock, ok, err := store.TryLockMaintenance(context.Background())
		if err != nil || !ok {
			t.Fatalf("lock: %v %v", ok, err)
		}
		mt, _ := outbox.NewMaintainer(store, outbox.DefaultMaintainerSettings())
		if _, err := mt.RunOnce(context.Background()); !errors.Is(err, outbox.ErrMaintenanceLocked) {
			t.Fatalf("RunOnce while locked = %v", err)
		}
		unlock()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { done <- mt.Run(ctx) }()
		time.Sleep(3 * time.Minute)
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("Run = %v", err)
		}
	})
}

func TestMaintainerReturnsPermanentErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mt, _ := outbox.NewMaintainer(purgeFailer{newFaultStore()}, outbox.DefaultMaintainerSettings())
		if err := mt.Run(context.Background()); !errors.Is(err, errMissingTable) {
			t.Fatalf("Run = %v", err)
		}
	})
}

type purgeFailer struct{ *faultStore }

func (purgeFailer) Purge(context.Context, outboxdriver.PurgeRequest) (outbox.PurgeReport, error) {
	return outbox.PurgeReport{}, errMissingTable
}

func TestMaintainerSettingsValidated(t *testing.T) {
	t.Parallel()
	neg := -time.Hour
	for name, change := range map[string]func(s *outbox.MaintainerSettings){
		"zero interval":      func(s *outbox.MaintainerSettings) { s.Interval = 0 },
		"zero batch":         func(s *outbox.MaintainerSettings) { s.BatchSize = 0 },
		"zero timeout":       func(s *outbox.MaintainerSettings) { s.StoreTimeout = 0 },
		"negative published": func(s *outbox.MaintainerSettings) { s.PublishedRetention = &neg },
		"negative dead":      func(s *outbox.MaintainerSettings) { s.DeadRetention = &neg },
	} {
		s := outbox.DefaultMaintainerSettings()
		change(&s)
		if _, err := outbox.NewMaintainer(newFaultStore(), s); !errors.Is(err, outbox.ErrInvalidSettings) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := outbox.NewMaintainer(nil, outbox.DefaultMaintainerSettings()); !errors.Is(err, outbox.ErrInvalidSettings) {
		t.Errorf("nil store: %v", err)
	}
}

func TestMaintainerPurgesTheInbox(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := inbox.NewMemory()
		for range 25 {
			tx := m.Begin()
			if _, err := m.MarkProcessed(context.Background(), tx, "billing", reliar.NewMessageID()); err != nil {
				t.Fatal(err)
			}
			tx.Commit()
		}
		m.Advance(15 * 24 * time.Hour)
		recent := reliar.NewMessageID()
		tx := m.Begin()
		m.MarkProcessed(context.Background(), tx, "billing", recent)
		tx.Commit()
		settings := outbox.DefaultMaintainerSettings()
		settings.BatchSize = 10
		mt, err := outbox.NewMaintainer(newFaultStore(), settings, outbox.MaintainInbox(m))
		if err != nil {
			t.Fatal(err)
		}
		r, err := mt.RunOnce(context.Background())
		if err != nil || r.ProcessedDeleted != 25 {
			t.Fatalf("processed records deleted %d (%v), want the 25 old ones in bounded passes", r.ProcessedDeleted, err)
		}
		tx = m.Begin()
		if first, _ := m.MarkProcessed(context.Background(), tx, "billing", recent); first {
			t.Fatal("a recent record was purged")
		}
		tx.Rollback()
		settings.InboxRetention = 0
		if _, err := outbox.NewMaintainer(newFaultStore(), settings, outbox.MaintainInbox(m)); !errors.Is(err, outbox.ErrInvalidSettings) {
			t.Fatalf("zero inbox retention accepted: %v", err)
		}
	})
}
