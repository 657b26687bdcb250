package outbox_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

func TestClaimNeverExceedsMaxInFlight(t *testing.T) {
	for _, tt := range []struct {
		name                   string
		batch, inFlight, total int
	}{
		{"batch larger than in-flight", 100, 8, 200},
		{"batch smaller than in-flight", 3, 10, 100},
		{"in-flight of one", 10, 1, 20},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				store := newFaultStore()
				enqueue(t, store.Store, tt.total)
				pub := newFakePublisher(sleepPublish(10 * time.Millisecond))
				s := testSettings()
				s.BatchSize, s.MaxInFlight = tt.batch, tt.inFlight
				d, err := outbox.New(store, pub, s)
				if err != nil {
					t.Fatal(err)
				}
				stop, _ := running(t, d)
				for pub.deliveredCount() < tt.total {
					time.Sleep(10 * time.Millisecond)
				}
				if err, _ := stop(); err != nil {
					t.Fatalf("Run: %v", err)
				}
				if peak := pub.peakConcurrency(); peak > tt.inFlight {
					t.Fatalf("peak concurrent publishes %d > MaxInFlight %d", peak, tt.inFlight)
				}
				half := (min(tt.batch, tt.inFlight) + 1) / 2
				for _, c := range store.callsOf("acquire") {
					if c.n > min(tt.batch, tt.inFlight) || c.n < half {
						t.Fatalf("claim asked for %d rows; want within [%d, %d]", c.n, half, min(tt.batch, tt.inFlight))
					}
				}
			})
		})
	}
}

func TestFullClaimClaimsAgainAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newFaultStore()
		enqueue(t, store.Store, 20)
		pub := newFakePublisher(nil)
		s := testSettings()
		s.BatchSize, s.MaxInFlight = 5, 100
		d, _ := outbox.New(store, pub, s)
		start := time.Now()
		stop, _ := running(t, d)
		time.Sleep(s.IdlePollInterval + time.Millisecond)
		stop()
		calls := store.callsOf("acquire")
		if len(calls) < 6 {
			t.Fatalf("%d claims, want at least 6", len(calls))
		}
		// Four full claims of 5 and the empty one after them, all at once.
		for i := range 5 {
			if got := calls[i].at.Sub(start); got != 0 {
				t.Fatalf("claim %d at +%v, want at once after the full claim before it", i, got)
			}
		}
		if got := calls[5].at.Sub(calls[4].at); got != s.IdlePollInterval {
			t.Fatalf("claim after an empty one came after %v, want IdlePollInterval %v", got, s.IdlePollInterval)
		}
	})
}

func TestShortClaimWaitsPollInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newFaultStore()
		enqueue(t, store.Store, 3)
		s := testSettings()
		s.BatchSize, s.MaxInFlight = 5, 100
		s.PollInterval, s.IdlePollInterval = 250*time.Millisecond, 2*time.Second
		d, _ := outbox.New(store, newFakePublisher(nil), s, outbox.WithoutWakeups())
		stop, _ := running(t, d)
		time.Sleep(3 * time.Second)
		stop()
		calls := store.callsOf("acquire")
		if len(calls) < 3 {
			t.Fatalf("%d claims, want 3", len(calls))
		}
		if gap := calls[1].at.Sub(calls[0].at); gap != s.PollInterval {
			t.Fatalf("after a short claim waited %v, want PollInterval %v", gap, s.PollInterval)
		}
		if gap := calls[2].at.Sub(calls[1].at); gap != s.IdlePollInterval {
			t.Fatalf("after an empty claim waited %v, want IdlePollInterval %v", gap, s.IdlePollInterval)
		}
	})
}

func TestWakeupEndsTheIdleWait(t *testing.T) {
	for _, tt := range []struct {
		name   string
		opts   []outbox.Option
		expect time.Duration // when the second claim happens
	}{
		{"with wake-ups", nil, 300 * time.Millisecond},
		{"without wake-ups", []outbox.Option{outbox.WithoutWakeups()}, time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				store := newFaultStore()
				if !store.Capabilities().Notify {
					t.Fatal("memstore should notify")
				}
				s := testSettings()
				s.IdlePollInterval = time.Second
				pub := newFakePublisher(nil)
				d, _ := outbox.New(store, pub, s, tt.opts...)
				start := time.Now()
				stop, _ := running(t, d)
				time.Sleep(300 * time.Millisecond)
				enqueue(t, store.Store, 1)
				for pub.deliveredCount() < 1 {
					time.Sleep(time.Millisecond)
				}
				stop()
				calls := store.callsOf("acquire")
				if got := calls[1].at.Sub(start); got != tt.expect {
					t.Fatalf("second claim at +%v, want +%v", got, tt.expect)
				}
			})
		})
	}
}

func TestWakeupDuringClaimClaimsAgainAfterIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newFaultStore()
		s := testSettings()
		s.IdlePollInterval = time.Second
		pub := newFakePublisher(nil)
		// The first claim takes 100ms; an enqueue lands while it runs.
		first := true
		store.hook("acquire", func(ctx context.Context, _ int) error {
			if first {
				first = false
				time.Sleep(100 * time.Millisecond)
			}
			return nil
		})
		d, _ := outbox.New(store, pub, s)
		start := time.Now()
		stop, _ := running(t, d)
		time.Sleep(50 * time.Millisecond)
		enqueue(t, store.Store, 1)
		for pub.deliveredCount() < 1 {
			time.Sleep(time.Millisecond)
		}
		stop()
		calls := store.callsOf("acquire")
		if got := calls[1].at.Sub(start); got != 100*time.Millisecond {
			t.Fatalf("claim after a wake-up during a claim at +%v, want right after it (+100ms)", got)
		}
	})
}

func TestPoisonCountedAndBatchContinues(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newFaultStore()
		bad := outboxdriver.Row{ID: reliar.NewMessageID(), MessageType: "orders.placed", Payload: []byte(`{}`), Metadata: []byte(`{not json`)}
		if err := store.InsertRow(bad); err != nil {
			t.Fatal(err)
		}
		ids := enqueue(t, store.Store, 4)
		m := newCountingMetrics()
		pub := newFakePublisher(nil)
		d, _ := outbox.New(store, pub, testSettings(), outbox.WithMetrics(m))
		stop, _ := running(t, d)
		for pub.deliveredCount() < len(ids) {
			time.Sleep(time.Millisecond)
		}
		stop()
		if got := m.snapshot().dead[outbox.DeadUndecodable]; got != 1 {
			t.Fatalf("undecodable deaths counted %d, want 1", got)
		}
		st := stateOf(t, store.Store, bad.ID)
		if st.DeadReason == nil || *st.DeadReason != string(outbox.DeadUndecodable) {
			t.Fatalf("poison row dead reason = %v", st.DeadReason)
		}
	})
}

func TestTransientAcquireErrorsNeverEndTheLoop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newFaultStore()
		store.hook("acquire", failTimes(5, errTransient))
		ids := enqueue(t, store.Store, 3)
		s := testSettings()
		pub := newFakePublisher(nil)
		d, _ := outbox.New(store, pub, s)
		stop, done := running(t, d)
		for pub.deliveredCount() < len(ids) {
			select {
			case err := <-done:
				t.Fatalf("Run ended on a transient error: %v", err)
			default:
			}
			time.Sleep(10 * time.Millisecond)
		}
		if err, _ := stop(); err != nil {
			t.Fatalf("Run: %v", err)
		}
		calls := store.callsOf("acquire")
		for i := 1; i < 6; i++ {
			if gap := calls[i].at.Sub(calls[i-1].at); gap != s.IdlePollInterval {
				t.Fatalf("after failed claim %d waited %v, want IdlePollInterval %v", i, gap, s.IdlePollInterval)
			}
		}
	})
}

func TestAcquireTimeoutIsTransient(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newFaultStore()
		var n int
		store.hook("acquire", func(ctx context.Context, _ int) error {
			n++
			if n <= 2 {
				return hang(ctx, 0)
			}
			return nil
		})
		ids := enqueue(t, store.Store, 1)
		s := testSettings()
		pub := newFakePublisher(nil)
		d, _ := outbox.New(store, pub, s)
		stop, _ := running(t, d)
		for pub.deliveredCount() < len(ids) {
			time.Sleep(10 * time.Millisecond)
		}
		if err, _ := stop(); err != nil {
			t.Fatalf("Run: %v", err)
		}
		calls := store.callsOf("acquire")
		if took := calls[0].done.Sub(calls[0].at); took != s.StoreTimeout {
			t.Fatalf("hung claim bounded after %v, want StoreTimeout %v", took, s.StoreTimeout)
		}
	})
}

// On a store with the ClaimAfter capability, a claim right after a full one
// starts after that claim's last row; a claim from a position that comes
// back short is followed at once by one from the head.
func TestClaimStartsAfterTheLastFullClaim(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newFaultStore()
		store.claimAfter = true
		enqueue(t, store.Store, 50)
		s := testSettings()
		s.BatchSize, s.MaxInFlight = 10, 100
		d, _ := outbox.New(store, newFakePublisher(nil), s, outbox.WithoutWakeups())
		stop, _ := running(t, d)
		time.Sleep(s.IdlePollInterval / 2)
		stop()
		claims := store.claimsSeen()
		if len(claims) < 7 {
			t.Fatalf("%d claims, want at least 7", len(claims))
		}
		if claims[0].after != nil {
			t.Fatalf("first claim After %v, want from the head", *claims[0].after)
		}
		for i := 1; i <= 5; i++ {
			prev, c := claims[i-1], claims[i]
			if c.after == nil || prev.last == nil || *c.after != *prev.last {
				t.Fatalf("claim %d After %v, want the last row of the full claim before it, %v", i, c.after, prev.last)
			}
		}
		// The sixth claim found nothing after the fifth's last row (the
		// memstore here does not honour After, and the 50 rows are held).
		if claims[5].got != 0 {
			t.Fatalf("claim 5 returned %d rows, want 0", claims[5].got)
		}
		if c := claims[6]; c.after != nil || !c.at.Equal(claims[5].at) {
			t.Fatalf("claim after a short one from a position: After %v at +%v, want from the head at once", c.after, c.at.Sub(claims[5].at))
		}
	})
}

// While claims come back full, one from the head is made at least every
// PollInterval, so that rows that became due behind the position wait at
// most that long.
func TestClaimFromTheHeadEveryPollInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newFaultStore()
		store.claimAfter = true
		enqueue(t, store.Store, 300)
		s := testSettings()
		s.BatchSize, s.MaxInFlight = 10, 10
		s.PollInterval = 100 * time.Millisecond
		pub := newFakePublisher(sleepPublish(20 * time.Millisecond))
		d, _ := outbox.New(store, pub, s, outbox.WithoutWakeups())
		stop, _ := running(t, d)
		for pub.deliveredCount() < 300 {
			time.Sleep(10 * time.Millisecond)
		}
		stop()
		var head time.Time
		heads, afters := 0, 0
		for i, c := range store.claimsSeen() {
			if c.after == nil {
				head, heads = c.at, heads+1
				continue
			}
			afters++
			if gap := c.at.Sub(head); gap >= s.PollInterval {
				t.Fatalf("claim %d from a position %v after the last claim from the head, want less than PollInterval %v", i, gap, s.PollInterval)
			}
		}
		if heads < 4 || afters < 10 {
			t.Fatalf("%d claims from the head and %d from a position over a drain of 600ms; want both throughout", heads, afters)
		}
	})
}

// No claim carries After on a store without the capability, nor under
// tenant fairness.
func TestClaimAfterOnlyWhereItApplies(t *testing.T) {
	for _, tt := range []struct {
		name       string
		capability bool
		fairness   outbox.Fairness
	}{
		{"store without ClaimAfter", false, outbox.FairnessUnordered},
		{"tenant fairness", true, outbox.FairnessTenant},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				store := newFaultStore()
				store.claimAfter = tt.capability
				enqueue(t, store.Store, 50)
				s := testSettings()
				s.BatchSize, s.MaxInFlight, s.Fairness = 10, 100, tt.fairness
				d, err := outbox.New(store, newFakePublisher(nil), s, outbox.WithoutWakeups())
				if err != nil {
					t.Fatal(err)
				}
				stop, _ := running(t, d)
				time.Sleep(s.IdlePollInterval / 2)
				stop()
				claims := store.claimsSeen()
				if len(claims) < 5 {
					t.Fatalf("%d claims, want at least 5", len(claims))
				}
				for i, c := range claims {
					if c.after != nil {
						t.Fatalf("claim %d After %v, want from the head", i, *c.after)
					}
				}
			})
		})
	}
}
