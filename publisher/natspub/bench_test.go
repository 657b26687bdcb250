package natspub_test

import (
	"testing"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/publisher/natspub"
	"github.com/reliar/reliar/publisher/publishertest"
)

func BenchmarkPublish(b *testing.B) {
	js := connect(b)
	_, prefix := testStream(b, js)
	p := newPublisher(b, js, natspub.WithSubjectPrefix(prefix))
	env := publishertest.Envelope(1)
	for b.Loop() {
		env.ID = reliar.NewMessageID()
		if err := p.Publish(b.Context(), env); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}

func BenchmarkPublishBatch100(b *testing.B) {
	js := connect(b)
	_, prefix := testStream(b, js)
	p := newPublisher(b, js, natspub.WithSubjectPrefix(prefix))
	envs := make([]*reliar.SerializedEnvelope, 100)
	for i := range envs {
		envs[i] = publishertest.Envelope(i)
	}
	for b.Loop() {
		for _, e := range envs {
			e.ID = reliar.NewMessageID()
		}
		for i, err := range p.PublishBatch(b.Context(), envs) {
			if err != nil {
				b.Fatalf("result %d: %v", i, err)
			}
		}
	}
	b.ReportMetric(float64(b.N*len(envs))/b.Elapsed().Seconds(), "msgs/s")
}
