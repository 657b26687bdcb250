package outboxsqltest

import (
	"testing"
	"time"

	"github.com/reliar/reliar/outbox/outboxdriver"
)

// BenchmarkEnqueue commits perTx messages per transaction.
func (tg Target[T]) BenchmarkEnqueue(b *testing.B, perTx int) {
	ctx := b.Context()
	s := tg.New(b)
	for b.Loop() {
		if err := Enqueue(ctx, s, NewMsgs(perTx)...); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(perTx*b.N)/b.Elapsed().Seconds(), "msgs/s")
}

// BenchmarkClaimComplete claims a batch of 100 due rows and completes them,
// on a table that also holds the published rows of the earlier iterations.
func (tg Target[T]) BenchmarkClaimComplete(b *testing.B) {
	ctx := b.Context()
	s := tg.New(b)
	const batch = 100
	for range b.N {
		if err := Enqueue(ctx, s, NewMsgs(batch)...); err != nil {
			b.Fatal(err)
		}
	}
	req := outboxdriver.AcquireRequest{Worker: "bench", BatchSize: batch, Lease: time.Minute}
	b.ResetTimer()
	for range b.N {
		got, err := s.Acquire(ctx, req)
		if err != nil {
			b.Fatal(err)
		}
		if len(got.Records) != batch {
			b.Fatalf("claimed %d rows, want %d", len(got.Records), batch)
		}
		leases := make([]outboxdriver.Lease, len(got.Records))
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
