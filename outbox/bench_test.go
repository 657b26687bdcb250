package outbox_test

import (
	"context"
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/outbox/memstore"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// completionCounter signals when n rows have been completed.
type completionCounter struct {
	*memstore.Store
	left atomic.Int64
	done chan struct{}
}

func (c *completionCounter) Complete(ctx context.Context, leases []outboxdriver.Lease) (int64, error) {
	n, err := c.Store.Complete(ctx, leases)
	if c.left.Add(-n) == 0 {
		close(c.done)
	}
	return n, err
}

// BenchmarkDispatcher measures the loop itself: b.N rows preloaded in
// memstore, a publisher that does nothing, timed from Run to the last
// Complete. ns/op is the dispatcher's cost per message.
func BenchmarkDispatcher(b *testing.B) {
	for _, bc := range []struct {
		name  string
		batch bool
		tune  func(s *outbox.Settings)
	}{
		{"defaults", false, func(*outbox.Settings) {}},
		{"batch-publisher-512", true, func(s *outbox.Settings) { s.BatchSize, s.MaxInFlight = 512, 512 }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			store := newMemStore()
			msgs := make([]reliar.Outgoing, 0, 1000)
			for i := 0; i < b.N; i += len(msgs) {
				msgs = msgs[:0]
				for j := i; j < min(b.N, i+1000); j++ {
					msgs = append(msgs, reliar.NewMsg(order{N: j}))
				}
				if _, err := store.Enqueue(context.Background(), msgs...); err != nil {
					b.Fatal(err)
				}
			}
			cc := &completionCounter{Store: store, done: make(chan struct{})}
			cc.left.Store(int64(b.N))
			var pub reliar.Publisher = reliar.PublisherFunc(func(context.Context, *reliar.SerializedEnvelope) error { return nil })
			if bc.batch {
				pub = noopBatch{}
			}
			s := outbox.DefaultSettings()
			s.StatsInterval = outbox.Off
			bc.tune(&s)
			d, err := outbox.New(cc, pub, s)
			if err != nil {
				b.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			errc := make(chan error, 1)
			runtime.GC() // collect the preload's garbage outside the timed region
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cpuTime()
			go func() { errc <- d.Run(ctx) }()
			<-cc.done
			b.StopTimer()
			// CPU time of this process per message: unlike ns/op, other
			// processes on a busy machine do not inflate it.
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
			cancel()
			if err := <-errc; err != nil {
				b.Fatal(err)
			}
		})
	}
}

// cpuTime is the user and system CPU time this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

type noopBatch struct{}

func (noopBatch) Publish(context.Context, *reliar.SerializedEnvelope) error { return nil }
func (noopBatch) PublishBatch(_ context.Context, envs []*reliar.SerializedEnvelope) []error {
	return make([]error, len(envs))
}
