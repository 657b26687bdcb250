package outbox_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox"
)

// Per-key ordering: several dispatchers, many keys, random transient
// failures; the first successful publish of each key's rows follows their
// sequence order, and every key drains (none starves).
func TestPerKeyOrderingAcrossDispatchersWithFailures(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const keys, perKey, dispatchers = 100, 20, 4
		store := newFaultStore()
		if !store.Capabilities().PerKeyOrdering {
			t.Fatal("memstore should support per-key ordering")
		}
		seqOf := map[reliar.MessageID]int{}
		keyOf := map[reliar.MessageID]string{}
		var msgs []reliar.Outgoing
		for i := range perKey {
			for k := range keys {
				m := reliar.NewMsg(order{N: i})
				m.OrderingKey = fmt.Sprintf("key-%d", k)
				seqOf[m.ID], keyOf[m.ID] = i, m.OrderingKey
				msgs = append(msgs, m)
			}
		}
		// Unordered rows ride along and must not be held back.
		for i := range 50 {
			msgs = append(msgs, reliar.NewMsg(order{N: 1000 + i}))
		}
		if _, err := store.Enqueue(context.Background(), msgs...); err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		firstOK := map[string][]int{} // key → sequence of first successes
		seen := map[reliar.MessageID]bool{}
		rng := rand.New(rand.NewPCG(1, 2))
		pub := newFakePublisher(func(context.Context, *reliar.SerializedEnvelope) error { return nil })
		pub.setBehaviour(func(_ context.Context, env *reliar.SerializedEnvelope) error {
			mu.Lock()
			defer mu.Unlock()
			if rng.IntN(10) == 0 {
				return errTransient
			}
			if key := keyOf[env.ID]; key != "" && !seen[env.ID] {
				firstOK[key] = append(firstOK[key], seqOf[env.ID])
			}
			seen[env.ID] = true
			return nil
		})
		s := testSettings()
		s.Ordering = outbox.PerKey
		s.BreakerThreshold = outbox.Off
		s.Retry = outbox.ExponentialBackoff{Base: 100 * time.Millisecond, Max: time.Second, Multiplier: 2, Jitter: 0.2, MaxAttempts: 50}
		stops := make([]func() (error, time.Duration), dispatchers)
		for i := range stops {
			d, err := outbox.New(store, pub, s)
			if err != nil {
				t.Fatal(err)
			}
			stops[i], _ = running(t, d)
		}
		for pub.deliveredCount() < len(msgs) {
			time.Sleep(100 * time.Millisecond)
		}
		for _, stop := range stops {
			if err, _ := stop(); err != nil {
				t.Fatal(err)
			}
		}
		if len(firstOK) != keys {
			t.Fatalf("%d keys published, want %d", len(firstOK), keys)
		}
		for key, seqs := range firstOK {
			for i, s := range seqs {
				if s != i {
					t.Fatalf("key %s published out of order: %v", key, seqs)
				}
			}
		}
	})
}
