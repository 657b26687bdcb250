//go:build chaos

package chaos_test

import (
	"syscall"
	"testing"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/chaos/check"
	"github.com/reliar/reliar/chaos/internal/rig"
	"github.com/reliar/reliar/outbox"
)

// S1: SIGKILL after the broker acknowledged and before Complete landed.
// The relay's store path goes through a proxy adding 100ms per request, so
// a published row waits long enough for its completion to be caught
// unwritten; the relay is killed then, and a second relay reclaims.
func TestS1KillBetweenPublishAndComplete(t *testing.T) {
	iterate(t, "S1_kill_before_complete", func(t *testing.T) check.Report {
		ctx := ctxFor(t, 2*time.Minute)
		r := rig.New(t, bin, rig.Options{})
		if err := r.Enqueue(ctx, 400, rig.EnqueueOptions{RollbackEvery: 5}); err != nil {
			t.Fatal(err)
		}
		db, slow := r.DatabaseVia()
		slow.SetDelay(100 * time.Millisecond)
		a := r.StartRelay("a", rig.RelayArgs{DatabaseURL: db, Dispatchers: 1})
		waitFor(t, 30*time.Second, "a published row not yet completed", func() bool {
			evs, err := a.Events()
			return err == nil && len(rig.PublishedNotCompleted(evs)) > 0
		})
		a.Kill()
		r.StartRelay("b", rig.RelayArgs{})
		rep := r.Finish(rig.FinishOptions{})
		if rep.ByWindow[check.WindowCrash] == 0 {
			t.Errorf("no duplicate in window 1: the kill did not land between publish and Complete (%s)", rep)
		}
		return rep
	})
}

// S2: a publish slower than the lease while a second relay runs. Relay a
// publishes through a proxy that then delays its traffic by 1.5s, and is
// stalled (SIGSTOP, as a VM pause or a long GC would) past its lease: the
// dispatcher bounds a publish by PublishTimeout < Lease, so only a stalled
// worker can still be publishing when its lease lapses. Relay b reclaims
// and publishes; a resumes, its late publishes land and its outcome writes
// are fenced off.
func TestS2LeaseLapsesDuringSlowPublish(t *testing.T) {
	iterate(t, "S2_slow_publish_lease_lapse", func(t *testing.T) check.Report {
		ctx := ctxFor(t, 2*time.Minute)
		r := rig.New(t, bin, rig.Options{})
		if err := r.Enqueue(ctx, 1000, rig.EnqueueOptions{}); err != nil {
			t.Fatal(err)
		}
		broker, slow := r.BrokerVia()
		args := rig.RelayArgs{Dispatchers: 1, Lease: 2 * time.Second, PublishTimeout: time.Second, StoreTimeout: 400 * time.Millisecond}
		args.Broker = broker
		a := r.StartRelay("a", args)
		waitFor(t, 30*time.Second, "a publishing", func() bool { return count(t, a, outbox.EventPublished) >= 20 })
		slow.SetDelay(1500 * time.Millisecond)
		time.Sleep(300 * time.Millisecond) // a's next publishes enter the slow path
		if err := a.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		args.Broker = ""
		b := r.StartRelay("b", args)
		waitFor(t, 30*time.Second, "b reclaiming a's rows", func() bool { return count(t, b, outbox.EventReclaimed) > 0 })
		time.Sleep(500 * time.Millisecond)
		if err := a.Signal(syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Second) // a's delayed publishes land
		alive(t, a, b)
		rep := r.Finish(rig.FinishOptions{})
		if rep.ByWindow[check.WindowSlowPublish] == 0 {
			t.Errorf("no duplicate in window 2 (%s)", rep)
		}
		return rep
	})
}

// S3: the drain deadline at shutdown. Relay a's acknowledgements are cut
// at the proxy, so its publishes reach the stream and hang; SIGTERM must
// still make it exit 0 within the drain timeout, releasing the cut-off
// rows, which relay b then publishes again.
func TestS3DrainTimeout(t *testing.T) {
	iterate(t, "S3_drain_timeout", func(t *testing.T) check.Report {
		ctx := ctxFor(t, 2*time.Minute)
		r := rig.New(t, bin, rig.Options{})
		if err := r.Enqueue(ctx, 600, rig.EnqueueOptions{}); err != nil {
			t.Fatal(err)
		}
		broker, proxy := r.BrokerVia()
		args := rig.RelayArgs{Broker: broker, Dispatchers: 1, Lease: 6 * time.Second, PublishTimeout: 2 * time.Second, DrainTimeout: time.Second}
		a := r.StartRelay("a", args)
		waitFor(t, 30*time.Second, "a publishing", func() bool { return count(t, a, outbox.EventPublished) >= 20 })
		proxy.CutAcks(true)
		time.Sleep(300 * time.Millisecond)
		stopCtx := ctxFor(t, 10*time.Second)
		took, err := a.Stop(stopCtx)
		if err != nil {
			t.Fatalf("relay a after SIGTERM: %v\n%s", err, a.Stderr())
		}
		if limit := args.DrainTimeout + time.Second; took > limit {
			t.Errorf("relay a took %v to drain; the drain timeout is %v", took, args.DrainTimeout)
		}
		if count(t, a, outbox.EventDrainCutOff)+count(t, a, outbox.EventLeftToLease) == 0 {
			t.Errorf("the drain cut nothing off: the acknowledgement cut did not hold a publish")
		}
		r.StartRelay("b", rig.RelayArgs{})
		rep := r.Finish(rig.FinishOptions{})
		if rep.ByWindow[check.WindowDrain]+rep.ByWindow[check.WindowAmbiguous] == 0 {
			t.Errorf("no duplicate from the drain's cut-off publishes (%s)", rep)
		}
		return rep
	})
}

// S4: pg_terminate_backend on the relays' connections, again and again,
// mid-batch, while the producer keeps committing. No relay may exit.
func TestS4TerminateBackends(t *testing.T) {
	iterate(t, "S4_terminate_backends", func(t *testing.T) check.Report {
		ctx := ctxFor(t, 2*time.Minute)
		r := rig.New(t, bin, rig.Options{})
		if err := r.Enqueue(ctx, 300, rig.EnqueueOptions{RollbackEvery: 4}); err != nil {
			t.Fatal(err)
		}
		a := r.StartRelay("a", rig.RelayArgs{})
		b := r.StartRelay("b", rig.RelayArgs{})
		// Either relay may claim the whole first backlog (one claim holds
		// 512 rows), so wait for publishing by either.
		waitFor(t, 30*time.Second, "a relay publishing", func() bool {
			return count(t, a, outbox.EventPublished)+count(t, b, outbox.EventPublished) > 0
		})
		terminated := 0
		for i := range 20 {
			for _, p := range []*rig.Relay{a, b} {
				if i%3 != 0 && p == b {
					continue
				}
				n, err := r.TerminateRelayBackends(ctx, p)
				if err != nil {
					t.Fatal(err)
				}
				terminated += n
			}
			if err := r.Enqueue(ctx, 30, rig.EnqueueOptions{}); err != nil {
				t.Fatal(err)
			}
			time.Sleep(250 * time.Millisecond)
		}
		if terminated == 0 {
			t.Fatal("no relay connection was terminated")
		}
		alive(t, a, b)
		t.Logf("terminated %d backends", terminated)
		return r.Finish(rig.FinishOptions{})
	})
}

// S9: a producer that embeds the dispatcher, as an application running
// Reliar in-process does, is SIGKILLed between commits and their hand-off
// (the zero-claim path: pgstore leases a row at enqueue to the dispatcher
// of its process and hands it over once the notification naming the
// enqueue proves the commit). Its broker path is slowed so that it holds
// claimed rows, some published and not completed; its store connections
// (claims, outcome writes, LISTEN) are then cut, so no proof reaches it and
// nothing more is written; it commits 30 more messages, leased to it at
// enqueue, and dies as the last commit returns. A relay started afterwards
// must publish every committed row, reclaiming the leased ones once their
// lease lapses.
func TestS9EmbeddedProducerKilledAfterCommit(t *testing.T) {
	iterate(t, "S9_embedded_producer_killed", func(t *testing.T) check.Report {
		ctx := ctxFor(t, 2*time.Minute)
		r := rig.New(t, bin, rig.Options{})
		storeURL, cut := r.DatabaseVia()
		broker, slow := r.BrokerVia()
		slow.SetDelay(50 * time.Millisecond)
		const before, after = 60, 30
		p := r.StartEmbedded(ctx, "p", rig.EmbeddedArgs{StoreURL: storeURL, Broker: broker, Before: before, After: after, MaxInFlight: 200})
		waitFor(t, 30*time.Second, "rows held by the embedded dispatcher", func() bool {
			evs, err := p.Events()
			return err == nil && len(rig.HeldNotCompleted(evs)) >= 5
		})
		cut.Down()
		acked := p.Resume(r, ctx)
		if len(acked) != before+after {
			t.Fatalf("the producer acknowledged %d commits, want %d", len(acked), before+after)
		}
		late := acked[before:]
		var leased int
		if err := r.Pool.QueryRow(ctx, `SELECT count(*) FROM "`+r.Name+`".outbox WHERE id = ANY($1) AND starts_with(locked_by, $2)`, late, p.WorkerPrefix(r)).Scan(&leased); err != nil {
			t.Fatal(err)
		}
		if leased == 0 {
			t.Fatalf("no row committed after the cut was leased at enqueue: the hand-off path was not exercised; stderr:\n%s", p.Stderr())
		}
		evs, err := p.Events()
		if err != nil {
			t.Fatal(err)
		}
		isLate := make(map[reliar.MessageID]bool)
		for _, id := range late {
			isLate[id] = true
		}
		for _, e := range evs {
			for _, id := range e.IDs {
				if isLate[id] {
					t.Fatalf("the embedded dispatcher saw %s, committed after its connections were cut (%s)", id, e.Kind)
				}
			}
		}
		t.Logf("%d of the %d rows committed after the cut were leased at enqueue", leased, after)
		b := r.StartRelay("b", rig.RelayArgs{})
		rep := r.Finish(rig.FinishOptions{})
		if count(t, b, outbox.EventReclaimed) == 0 {
			t.Errorf("relay b reclaimed nothing: the producer died holding no row (%s)", rep)
		}
		return rep
	})
}
