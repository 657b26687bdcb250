package kafkapub_test

import (
	"context"
	"testing"
	"time"

	"github.com/reliar/reliar/publisher/kafkapub"
	"github.com/twmb/franz-go/pkg/kgo"
)

// lingers are the client settings the benchmarks compare: NewClient's
// default of no linger, and franz-go's own default of 10ms.
var lingers = []struct {
	name string
	opts []kgo.Opt
}{
	{"linger=0", nil},
	{"linger=10ms", []kgo.Opt{kgo.ProducerLinger(10 * time.Millisecond)}},
}

// BenchmarkPublish measures one synchronous publish (produce and wait for
// the acknowledgement) against an in-process kfake broker.
func BenchmarkPublish(b *testing.B) {
	for _, l := range lingers {
		b.Run(l.name, func(b *testing.B) {
			c := newCluster(b, "bench")
			p := newPublisher(b, c, l.opts, kafkapub.WithDefaultTopic("bench"))
			env := envelope(1, "orders.placed")
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if err := p.Publish(ctx, env); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPublishBatch measures batches of 100 messages; msgs/s is the
// throughput in messages.
func BenchmarkPublishBatch(b *testing.B) {
	const size = 100
	for _, l := range lingers {
		b.Run(l.name, func(b *testing.B) {
			c := newCluster(b, "bench")
			p := newPublisher(b, c, l.opts, kafkapub.WithDefaultTopic("bench"))
			envs := batch(size, "orders.placed")
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				for i, err := range p.PublishBatch(ctx, envs) {
					if err != nil {
						b.Fatalf("result %d: %v", i, err)
					}
				}
			}
			b.ReportMetric(float64(b.N*size)/b.Elapsed().Seconds(), "msgs/s")
		})
	}
}
