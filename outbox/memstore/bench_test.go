package memstore_test

import (
	"testing"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// BenchmarkAcquireComplete measures one dispatcher cycle on a store holding
// a backlog of 5,000 to 10,000 due rows, half of them keyed: claim 100 rows,
// then complete them. Refilling the backlog and purging published rows happen
// outside the timer, every 50 cycles (stopping the timer is itself costly).
func BenchmarkAcquireComplete(b *testing.B) {
	for _, ordering := range []outboxdriver.Ordering{outboxdriver.Unordered, outboxdriver.PerKey} {
		b.Run(ordering.String(), func(b *testing.B) {
			benchmarkAcquireComplete(b, ordering)
		})
	}
}

func benchmarkAcquireComplete(b *testing.B, ordering outboxdriver.Ordering) {
	const backlog, batch = 10_000, 100
	ctx := b.Context()
	s := newMemStore()
	n := 0
	fill := func(count int) {
		msgs := make([]reliar.Outgoing, count)
		for i := range msgs {
			msgs[i] = reliar.NewMsg(orderPlaced{OrderID: "o"})
			if n%2 == 0 {
				msgs[i].OrderingKey = "key-" + string(rune('a'+n%1000))
			}
			n++
		}
		if _, err := s.Enqueue(ctx, msgs...); err != nil {
			b.Fatal(err)
		}
	}
	fill(backlog)
	purgeAll := outboxdriver.PurgeRequest{PublishedRetention: new(-time.Hour), BatchSize: backlog}
	req := outboxdriver.AcquireRequest{Worker: "bench", BatchSize: batch, Lease: time.Minute, Ordering: ordering}
	leases := make([]outboxdriver.Lease, 0, batch)
	claimed := 0
	b.ReportAllocs()
	for b.Loop() {
		got, err := s.Acquire(ctx, req)
		if err != nil {
			b.Fatal(err)
		}
		leases = leases[:0]
		for i := range got.Records {
			leases = append(leases, got.Records[i].Lease())
		}
		if done, err := s.Complete(ctx, leases); err != nil || done != int64(len(got.Records)) || done == 0 {
			b.Fatalf("Complete = %d, %v; want %d", done, err, len(got.Records))
		}
		claimed += len(got.Records)
		if claimed == backlog/2 {
			b.StopTimer()
			if _, err := s.Purge(ctx, purgeAll); err != nil {
				b.Fatal(err)
			}
			fill(claimed)
			claimed = 0
			b.StartTimer()
		}
	}
}
