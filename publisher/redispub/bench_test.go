package redispub_test

import (
	"testing"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/publisher/publishertest"
	"github.com/reliar/reliar/publisher/redispub"
)

func BenchmarkPublish(b *testing.B) {
	c := newClient(b)
	p := newPublisher(b, c, redispub.WithStream(uniqueKey(b, c, "bench")))
	env := publishertest.Envelope(1)
	for b.Loop() {
		if err := p.Publish(b.Context(), env); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}

func BenchmarkPublishBatch100(b *testing.B) {
	c := newClient(b)
	p := newPublisher(b, c, redispub.WithStream(uniqueKey(b, c, "bench")))
	envs := make([]*reliar.SerializedEnvelope, 100)
	for i := range envs {
		envs[i] = publishertest.Envelope(i)
	}
	for b.Loop() {
		for i, err := range p.PublishBatch(b.Context(), envs) {
			if err != nil {
				b.Fatalf("result %d: %v", i, err)
			}
		}
	}
	b.ReportMetric(float64(b.N*len(envs))/b.Elapsed().Seconds(), "msgs/s")
}
