//go:build chaos

package chaos_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/reliar/reliar/chaos/check"
	"github.com/reliar/reliar/chaos/internal/pgcluster"
	"github.com/reliar/reliar/chaos/internal/rig"
	"github.com/reliar/reliar/outbox"
)

// throwawayCluster creates a PostgreSQL cluster for this test alone and
// drops it at cleanup; the shared server is never crashed.
func throwawayCluster(t *testing.T) *pgcluster.Cluster {
	t.Helper()
	ctx := ctxFor(t, time.Minute)
	c, err := pgcluster.Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := c.Drop(ctx); err != nil {
			t.Errorf("drop cluster %s: %v", c.Name, err)
		}
	})
	return c
}

// crashRestart crashes the cluster, keeps it down for down, and starts it.
func crashRestart(t *testing.T, c *pgcluster.Cluster, down time.Duration) {
	t.Helper()
	ctx := ctxFor(t, time.Minute)
	if err := c.Crash(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(down)
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
}

// S5: PostgreSQL crashes (immediate stop, crash recovery at start) under
// two relays, twice; they must ride it out and deliver everything, and
// every commit acknowledged before the crash must survive it.
func TestS5PostgresCrashRestart(t *testing.T) {
	cluster := throwawayCluster(t)
	iterate(t, "S5_postgres_crash_restart", func(t *testing.T) check.Report {
		ctx := ctxFor(t, 3*time.Minute)
		r := rig.New(t, bin, rig.Options{DatabaseURL: cluster.URL()})
		if err := r.Enqueue(ctx, 600, rig.EnqueueOptions{RollbackEvery: 5}); err != nil {
			t.Fatal(err)
		}
		a := r.StartRelay("a", rig.RelayArgs{})
		b := r.StartRelay("b", rig.RelayArgs{})
		waitFor(t, 30*time.Second, "a publishing", func() bool { return count(t, a, outbox.EventPublished) > 0 })
		for range 2 {
			crashRestart(t, cluster, 1500*time.Millisecond)
			if err := r.ReopenPool(ctx); err != nil {
				t.Fatal(err)
			}
			if err := r.Enqueue(ctx, 200, rig.EnqueueOptions{}); err != nil {
				t.Fatal(err)
			}
			time.Sleep(300 * time.Millisecond)
		}
		alive(t, a, b)
		return r.Finish(rig.FinishOptions{})
	})
}

// S6: the stream refuses publishes for a while (its message limit
// reached, discard new: a transient refusal), then the broker is
// unreachable for several lease lengths, then its acknowledgements are cut
// (window 4), then all is well again. The circuit breaker must keep every
// row out of dead letters.
func TestS6BrokerOutage(t *testing.T) {
	iterate(t, "S6_broker_outage", func(t *testing.T) check.Report {
		ctx := ctxFor(t, 3*time.Minute)
		r := rig.New(t, bin, rig.Options{StreamMaxMsgs: 100})
		if err := r.Enqueue(ctx, 300, rig.EnqueueOptions{}); err != nil {
			t.Fatal(err)
		}
		broker, proxy := r.BrokerVia()
		args := rig.RelayArgs{Broker: broker, Lease: 2 * time.Second, PublishTimeout: 500 * time.Millisecond, StoreTimeout: 300 * time.Millisecond}
		a := r.StartRelay("a", args)
		const refusals = 30
		waitFor(t, 30*time.Second, "refused publishes", func() bool { return count(t, a, outbox.EventPublishFailed) >= refusals })
		if err := r.RaiseStreamLimit(ctx); err != nil {
			t.Fatal(err)
		}
		proxy.Down()
		if err := r.Enqueue(ctx, 300, rig.EnqueueOptions{}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(3 * args.Lease)
		proxy.Heal()
		time.Sleep(time.Second)
		proxy.CutAcks(true)
		time.Sleep(1500 * time.Millisecond)
		proxy.CutAcks(false)
		alive(t, a)
		rep := r.Finish(rig.FinishOptions{})
		if rep.Dead > 0 {
			t.Errorf("%d rows dead after refusals and a broker outage", rep.Dead)
		}
		if rep.ByWindow[check.WindowAmbiguous] == 0 {
			t.Errorf("no duplicate in window 4 after cutting acknowledgements (%s)", rep)
		}
		return rep
	})
}

// S7: the commit-order race under per-key ordering: per key, a message
// with a smaller sequence commits after one with a larger sequence, while
// two relays run and one is killed and replaced. Delivery must follow the
// sequence per key. A relay without per-key ordering is checked for
// delivery only (unordered dispatch promises no order).
func TestS7CommitOrderRace(t *testing.T) {
	iterate(t, "S7_commit_order_race", func(t *testing.T) check.Report {
		ctx := ctxFor(t, 3*time.Minute)
		r := rig.New(t, bin, rig.Options{})
		const keys = 8
		if err := r.Enqueue(ctx, 200, rig.EnqueueOptions{Keys: keys}); err != nil {
			t.Fatal(err)
		}
		args := rig.RelayArgs{PerKey: bin.PerKey}
		a := r.StartRelay("a", args)
		b := r.StartRelay("b", args)
		for round := range 3 {
			races := make(chan error, keys)
			for k := range keys {
				go func() { races <- r.EnqueueRace(ctx, fmt.Sprintf("k%d", k), 300*time.Millisecond) }()
			}
			for range keys {
				if err := <-races; err != nil {
					t.Fatal(err)
				}
			}
			if err := r.Enqueue(ctx, 40, rig.EnqueueOptions{Keys: keys, PerTx: 1}); err != nil {
				t.Fatal(err)
			}
			if round == 1 {
				a.Kill()
				a = r.StartRelay("a2", args)
			}
		}
		alive(t, a, b)
		return r.Finish(rig.FinishOptions{Ordered: bin.PerKey})
	})
}

// S8: a randomized soak of every fault above against two relays, on a
// throwaway cluster, bounded by CHAOS_SOAK; then everything heals and
// drains. The seed is logged.
func TestS8Soak(t *testing.T) {
	cluster := throwawayCluster(t)
	iterate(t, "S8_soak", func(t *testing.T) check.Report {
		seed := uint64(time.Now().UnixNano())
		t.Logf("seed %d", seed)
		rnd := rand.New(rand.NewPCG(seed, seed>>1))
		ctx := ctxFor(t, soakFor+3*time.Minute)
		r := rig.New(t, bin, rig.Options{DatabaseURL: cluster.URL()})
		s := &soak{t: t, r: r, rnd: rnd, cluster: cluster}
		for i := range 2 {
			s.start(fmt.Sprintf("r%d", i))
		}
		if err := r.Enqueue(ctx, 200, rig.EnqueueOptions{RollbackEvery: 7}); err != nil {
			t.Fatal(err)
		}
		for end := time.Now().Add(soakFor); time.Now().Before(end); {
			s.fault(ctx)
			if err := r.Enqueue(ctx, 20+rnd.IntN(60), rig.EnqueueOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("faults: %v", s.faults)
		return r.Finish(rig.FinishOptions{})
	})
}

// soak holds the relays of a soak run, each behind its own broker proxy.
type soak struct {
	t       *testing.T
	r       *rig.Run
	rnd     *rand.Rand
	cluster *pgcluster.Cluster
	relays  []*soakRelay
	n       int
	faults  map[string]int
}

type soakRelay struct {
	p     *rig.Relay
	proxy interface {
		Down()
		Heal()
		CutAcks(bool)
		SetDelay(time.Duration)
	}
}

var soakArgs = rig.RelayArgs{Lease: 2 * time.Second, PublishTimeout: 700 * time.Millisecond, StoreTimeout: 300 * time.Millisecond, DrainTimeout: time.Second}

func (s *soak) start(name string) *soakRelay {
	broker, proxy := s.r.BrokerVia()
	a := soakArgs
	a.Broker = broker
	sr := &soakRelay{p: s.r.StartRelay(name, a), proxy: proxy}
	s.relays = append(s.relays, sr)
	return sr
}

// fault injects one random fault and undoes it.
func (s *soak) fault(ctx context.Context) {
	t := s.t
	if s.faults == nil {
		s.faults = make(map[string]int)
	}
	sr := s.relays[s.rnd.IntN(len(s.relays))]
	pause := time.Duration(300+s.rnd.IntN(700)) * time.Millisecond
	kinds := []string{"kill", "term", "stall", "broker_down", "cut_acks", "slow_broker", "terminate_backends", "postgres_crash"}
	kind := kinds[s.rnd.IntN(len(kinds))]
	s.faults[kind]++
	switch kind {
	case "kill", "term":
		if kind == "kill" {
			sr.p.Kill()
		} else if !waitStarted(ctx, sr.p) {
			t.Errorf("relay %s did not start within 15s\n%s", sr.p.Name, sr.p.Stderr())
		} else if _, err := sr.p.Stop(ctx); err != nil {
			t.Errorf("relay %s after SIGTERM: %v\n%s", sr.p.Name, err, sr.p.Stderr())
		}
		s.n++
		s.relays = remove(s.relays, sr)
		s.start(fmt.Sprintf("r%d", len(s.relays)+s.n+1))
		time.Sleep(pause)
	case "stall":
		_ = sr.p.Signal(syscall.SIGSTOP)
		time.Sleep(soakArgs.Lease + pause)
		_ = sr.p.Signal(syscall.SIGCONT)
	case "broker_down":
		sr.proxy.Down()
		time.Sleep(2*soakArgs.Lease + pause)
		sr.proxy.Heal()
	case "cut_acks":
		sr.proxy.CutAcks(true)
		time.Sleep(pause)
		sr.proxy.CutAcks(false)
	case "slow_broker":
		sr.proxy.SetDelay(400 * time.Millisecond)
		time.Sleep(pause)
		sr.proxy.SetDelay(0)
	case "terminate_backends":
		if _, err := s.r.TerminateRelayBackends(ctx, sr.p); err != nil {
			t.Fatal(err)
		}
		time.Sleep(pause)
	case "postgres_crash":
		crashRestart(t, s.cluster, pause)
		if err := s.r.ReopenPool(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for _, x := range s.relays {
		alive(t, x.p)
	}
}

func remove(rs []*soakRelay, x *soakRelay) []*soakRelay {
	out := rs[:0]
	for _, r := range rs {
		if r != x {
			out = append(out, r)
		}
	}
	return out
}

// waitStarted gives a relay up to 15 s to install its signal handlers, so
// that a SIGTERM drains it (a relay the soak just restarted may still be
// starting).
func waitStarted(ctx context.Context, p *rig.Relay) bool {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	return p.WaitStarted(ctx)
}
