package outbox_test

import (
	"context"
	"errors"
	"slices"
	"strings"
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
		mt, err := outbox.NewMaintainer(store, settings, outbox.WithMetrics(m))
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
	for name, change := range map[string]func(s *outbox.MaintainerSettings){
		"negative interval":  func(s *outbox.MaintainerSettings) { s.Interval = -time.Second },
		"negative batch":     func(s *outbox.MaintainerSettings) { s.BatchSize = -1 },
		"negative timeout":   func(s *outbox.MaintainerSettings) { s.StoreTimeout = -time.Second },
		"negative published": func(s *outbox.MaintainerSettings) { s.PublishedRetention = -time.Hour },
		"negative dead":      func(s *outbox.MaintainerSettings) { s.DeadRetention = -time.Hour },
		"negative inbox":     func(s *outbox.MaintainerSettings) { s.InboxRetention = -time.Hour },
	} {
		var s outbox.MaintainerSettings
		change(&s)
		if err := s.Validate(); !errors.Is(err, outbox.ErrInvalidSettings) {
			t.Errorf("%s: Validate = %v", name, err)
		}
		if _, err := outbox.NewMaintainer(newFaultStore(), s); !errors.Is(err, outbox.ErrInvalidSettings) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := outbox.NewMaintainer(nil, outbox.DefaultMaintainerSettings()); !errors.Is(err, outbox.ErrInvalidSettings) {
		t.Errorf("nil store: %v", err)
	}
}

func TestMaintainerSettingsZeroMeansDefault(t *testing.T) {
	t.Parallel()
	if got, want := (outbox.MaintainerSettings{}).WithDefaults(), outbox.DefaultMaintainerSettings(); got != want {
		t.Fatalf("zero settings with defaults %+v, want %+v", got, want)
	}
	want := outbox.DefaultMaintainerSettings()
	if want.PublishedRetention != outbox.DefaultPublishedRetention || want.DeadRetention != outbox.DefaultDeadRetention {
		t.Fatalf("default retention %v / %v", want.PublishedRetention, want.DeadRetention)
	}
	mt, err := outbox.NewMaintainer(newFaultStore(), outbox.MaintainerSettings{BatchSize: 10})
	if err != nil {
		t.Fatalf("one field set: %v", err)
	}
	got := mt.Settings()
	want.BatchSize = 10
	if got != want {
		t.Fatalf("effective settings %+v, want %+v", got, want)
	}
}

func TestMaintainerSettingsReportEveryProblem(t *testing.T) {
	t.Parallel()
	err := outbox.MaintainerSettings{Interval: -1, BatchSize: -1, DeadRetention: -2 * time.Hour}.Validate()
	fields := configFields(err)
	for _, f := range []string{"Interval", "BatchSize", "DeadRetention"} {
		if !slices.Contains(fields, f) {
			t.Errorf("problems %v do not name %s", fields, f)
		}
	}
}

// configFields returns the fields named by the *ConfigErrors joined in err.
func configFields(err error) []string {
	var fields []string
	var walk func(error)
	walk = func(err error) {
		var ce *outbox.ConfigError
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				walk(e)
			}
		} else if errors.As(err, &ce) {
			fields = append(fields, ce.Field)
		}
	}
	walk(err)
	return fields
}

func TestMaintainerKeepForeverSkipsDeletion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newFaultStore()
		var got outboxdriver.PurgeRequest
		rec := purgeRecorder{faultStore: store, got: &got}
		mt, err := outbox.NewMaintainer(rec, outbox.MaintainerSettings{PublishedRetention: outbox.KeepForever})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := mt.RunOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got.PublishedRetention != nil || got.DeadRetention == nil || *got.DeadRetention != outbox.DefaultDeadRetention {
			t.Fatalf("purge request %+v: want published kept for ever and dead after the default", got)
		}
	})
}

type purgeRecorder struct {
	*faultStore
	got *outboxdriver.PurgeRequest
}

func (p purgeRecorder) Purge(ctx context.Context, req outboxdriver.PurgeRequest) (outbox.PurgeReport, error) {
	*p.got = req
	return p.faultStore.Purge(ctx, req)
}

func TestMaintainerRefusesDispatcherOptions(t *testing.T) {
	t.Parallel()
	_, err := outbox.NewMaintainer(newFaultStore(), outbox.MaintainerSettings{}, outbox.WithTracer(outbox.NoopTracer{}), outbox.WithoutWakeups())
	if !errors.Is(err, outbox.ErrInvalidOption) || !strings.Contains(err.Error(), "WithTracer") || !strings.Contains(err.Error(), "WithoutWakeups") {
		t.Fatalf("NewMaintainer with dispatcher options = %v, want both refused", err)
	}
	_, err = outbox.New(newFaultStore(), newFakePublisher(nil), outbox.Settings{}, outbox.WithInbox(inbox.NewMemory()))
	if !errors.Is(err, outbox.ErrInvalidOption) {
		t.Fatalf("New with WithInbox = %v, want ErrInvalidOption", err)
	}
	_, err = outbox.New(newFaultStore(), newFakePublisher(nil), outbox.Settings{}, outbox.WithLogger(nil))
	if !errors.Is(err, outbox.ErrInvalidOption) {
		t.Fatalf("New with WithLogger(nil) = %v, want ErrInvalidOption", err)
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
		mt, err := outbox.NewMaintainer(newFaultStore(), settings, outbox.WithInbox(m))
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
		settings.InboxRetention = -time.Hour
		if _, err := outbox.NewMaintainer(newFaultStore(), settings, outbox.WithInbox(m)); !errors.Is(err, outbox.ErrInvalidSettings) {
			t.Fatalf("negative inbox retention accepted: %v", err)
		}
	})
}
