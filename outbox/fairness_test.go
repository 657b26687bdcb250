package outbox_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/outbox/memstore"
)

// enqueueTenant commits n orders of tenant in one call and returns their ids.
func enqueueTenant(t *testing.T, s *memstore.Store, tenant string, n int) []reliar.MessageID {
	t.Helper()
	msgs := make([]reliar.Outgoing, n)
	for i := range msgs {
		msgs[i] = reliar.NewMsg(order{N: i})
		msgs[i].Metadata.TenantID = tenant
	}
	ids, err := s.Enqueue(context.Background(), msgs...)
	if err != nil {
		t.Fatalf("enqueue: %v", err)
	}
	return ids
}

// tenantBacklog runs one dispatcher over a big tenant's backlog of 5000 rows
// and a small tenant's 5 rows, enqueued once the dispatcher has published
// 200 of the big ones, publishing at 1ms a message; it returns how many of
// the big tenant's rows were published before the small tenant's last.
func tenantBacklog(t *testing.T, fairness outbox.Fairness) (bigBefore int) {
	t.Helper()
	const big, small = 5000, 5
	store := newMemStore()
	enqueueTenant(t, store, "big", big)
	pub := newFakePublisher(sleepPublish(time.Millisecond))
	s := testSettings()
	s.Fairness = fairness
	s.BatchSize, s.MaxInFlight = 50, 100
	d, err := outbox.New(store, pub, s)
	if err != nil {
		t.Fatal(err)
	}
	stop, _ := running(t, d)
	for pub.deliveredCount() < 200 {
		time.Sleep(time.Millisecond)
	}
	smallIDs := enqueueTenant(t, store, "small", small)
	for pub.deliveredCount() < big+small {
		time.Sleep(10 * time.Millisecond)
	}
	if err, _ := stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	pub.mu.Lock()
	defer pub.mu.Unlock()
	for id, n := range pub.delivered {
		if n != 1 {
			t.Fatalf("row %s published %d times, want once", id, n)
		}
	}
	last := 0
	for i, id := range pub.order {
		if slices.Contains(smallIDs, id) {
			last = i
		}
	}
	return last - (small - 1)
}

// TestFairnessSmallTenantOvertakesBacklog: under FairnessTenant a small
// tenant's rows, committed while a big tenant's backlog drains, are
// published within about one claim cycle, long before the backlog is half
// drained; the unfair claim, for contrast, publishes them after it.
func TestFairnessSmallTenantOvertakesBacklog(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bigBefore := tenantBacklog(t, outbox.FairnessTenant)
		// 200 before the enqueue, then about the rows in flight (100) and
		// a claim or two (50 each): a few claim cycles at most.
		if bigBefore >= 2500 || bigBefore > 200+4*100 {
			t.Fatalf("fair: %d of the big tenant's rows published before the small tenant's, want about 200 + MaxInFlight", bigBefore)
		}
		t.Logf("fair: %d big rows before the small tenant's last", bigBefore)
	})
	synctest.Test(t, func(t *testing.T) {
		if bigBefore := tenantBacklog(t, outbox.FairnessUnordered); bigBefore < 4900 {
			t.Fatalf("unfair: only %d of the big tenant's rows published before the small tenant's; the contrast proves nothing", bigBefore)
		}
	})
}

// TestFairnessPerTenantCap: a tenant whose publisher hangs holds at most
// MaxInFlightPerTenant rows, so another tenant's rows keep flowing through
// the rest of MaxInFlight. The cap holds the fast tenant to 3 rows a claim
// too; a claim the cap cut short is followed by the next one as soon as a
// capped tenant's row leaves, not after PollInterval (a long one here: 34
// claims a PollInterval apart would outlast the slow tenant's timeout).
func TestFairnessPerTenantCap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const perTenantCap, slowRows, fastRows = 3, 50, 100
		store := newMemStore()
		slowIDs := enqueueTenant(t, store, "slow", slowRows)
		enqueueTenant(t, store, "fast", fastRows)
		var mu sync.Mutex
		publishing, peak := 0, 0
		pub := newFakePublisher(func(ctx context.Context, env *reliar.SerializedEnvelope) error {
			if env.Metadata.TenantID != "slow" {
				return sleepPublish(time.Millisecond)(ctx, env)
			}
			mu.Lock()
			publishing++
			peak = max(peak, publishing)
			mu.Unlock()
			defer func() {
				mu.Lock()
				publishing--
				mu.Unlock()
			}()
			<-ctx.Done()
			return ctx.Err()
		})
		s := testSettings()
		s.Fairness = outbox.FairnessTenant
		s.MaxInFlightPerTenant = perTenantCap
		s.BatchSize, s.MaxInFlight = 10, 20
		s.PublishTimeout = 5 * time.Second
		s.PollInterval = time.Second
		d, err := outbox.New(store, pub, s)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		stop, _ := running(t, d)
		heldSlow := func() int {
			n := 0
			for _, id := range slowIDs {
				if st := stateOf(t, store, id); st.LeaseToken != nil && st.LockedUntil.After(time.Now()) {
					n++
				}
			}
			return n
		}
		for pub.deliveredCount() < fastRows {
			if n := heldSlow(); n > perTenantCap {
				t.Fatalf("the slow tenant holds %d leased rows, over its cap of %d", n, perTenantCap)
			}
			if time.Since(start) >= s.PublishTimeout {
				t.Fatalf("the fast tenant's rows were not all published (%d of %d) before the slow tenant's first publish timed out",
					pub.deliveredCount(), fastRows)
			}
			time.Sleep(time.Millisecond)
		}
		mu.Lock()
		p := peak
		mu.Unlock()
		if p != perTenantCap {
			t.Fatalf("the slow tenant had at most %d rows publishing at once, want its cap %d", p, perTenantCap)
		}
		if err, _ := stop(); err != nil {
			t.Fatalf("Run: %v", err)
		}
	})
}

// noFairStore is a memstore that claims no TenantFairness capability.
type noFairStore struct{ *memstore.Store }

func (s noFairStore) Capabilities() outbox.Capabilities {
	c := s.Store.Capabilities()
	c.TenantFairness = false
	return c
}

// TestNewRefusesTenantFairnessWithoutTheCapability: a store that cannot
// claim fairly is refused at New, never run silently unfair.
func TestNewRefusesTenantFairnessWithoutTheCapability(t *testing.T) {
	t.Parallel()
	store := noFairStore{newMemStore()}
	_, err := outbox.New(store, newFakePublisher(nil), outbox.Settings{Fairness: outbox.FairnessTenant})
	var ce *outbox.ConfigError
	if !errors.Is(err, outbox.ErrInvalidSettings) || !errors.As(err, &ce) || ce.Field != "Fairness" {
		t.Fatalf("New with FairnessTenant on a store without the capability: %v, want a ConfigError on Fairness matching ErrInvalidSettings", err)
	}
	if _, err := outbox.New(store, newFakePublisher(nil), outbox.Settings{}); err != nil {
		t.Fatalf("New with the default fairness: %v", err)
	}
	if _, err := outbox.New(newMemStore(), newFakePublisher(nil), outbox.Settings{Fairness: outbox.FairnessTenant, MaxInFlightPerTenant: 4}); err != nil {
		t.Fatalf("New with FairnessTenant on memstore: %v", err)
	}
}

func TestParseFairness(t *testing.T) {
	t.Parallel()
	for _, f := range []outbox.Fairness{outbox.FairnessUnordered, outbox.FairnessTenant} {
		if got, ok := outbox.ParseFairness(f.String()); !ok || got != f {
			t.Errorf("ParseFairness(%q) = %v, %v; want %v", f.String(), got, ok, f)
		}
	}
	if got, ok := outbox.ParseFairness(""); !ok || got != outbox.FairnessUnordered {
		t.Errorf("ParseFairness(\"\") = %v, %v; want unordered", got, ok)
	}
	if _, ok := outbox.ParseFairness("Tenant"); ok {
		t.Error("ParseFairness(\"Tenant\") accepted")
	}
}
