package mysqlstore_test

import (
	"testing"
	"time"

	"github.com/reliar/reliar/outbox"
)

// BenchmarkEnqueueBatch100 commits 100 messages per transaction.
func BenchmarkEnqueueBatch100(b *testing.B) {
	ctx := b.Context()
	s := newStore(b)
	for b.Loop() {
		if err := enqueue(ctx, s, newMsgs(100)...); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(100*b.N)/b.Elapsed().Seconds(), "msgs/s")
}

// BenchmarkClaimComplete claims a batch of 100 due rows and completes them.
func BenchmarkClaimComplete(b *testing.B) {
	ctx := b.Context()
	s := newStore(b)
	const batch = 100
	for range b.N {
		if err := enqueue(ctx, s, newMsgs(batch)...); err != nil {
			b.Fatal(err)
		}
	}
	req := outbox.AcquireRequest{Worker: "bench", BatchSize: batch, Lease: time.Minute}
	b.ResetTimer()
	for range b.N {
		got, err := s.Acquire(ctx, req)
		if err != nil || len(got.Records) != batch {
			b.Fatalf("claimed %d rows, %v", len(got.Records), err)
		}
		leases := make([]outbox.Lease, len(got.Records))
		for i := range got.Records {
			leases[i] = got.Records[i].Lease()
		}
		if n, err := s.Complete(ctx, leases); err != nil || n != batch {
			b.Fatalf("Complete: %d, %v", n, err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(batch*b.N)/b.Elapsed().Seconds(), "msgs/s")
}
