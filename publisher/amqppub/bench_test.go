package amqppub_test

import (
	"context"
	"testing"

	amqp091 "github.com/rabbitmq/amqp091-go"
	"github.com/reliar/reliar/publisher/amqppub"
)

// benchTopology declares an exchange and a consumed queue for a
// benchmark, deleted at the end.
func benchTopology(b *testing.B) string {
	b.Helper()
	top := newTopology(b, binding{kind: amqp091.ExchangeTopic, key: "#"})
	return top.exchange
}

// BenchmarkPublish measures one confirmed publish against the local
// RabbitMQ.
func BenchmarkPublish(b *testing.B) {
	p := newPublisher(b, brokerURL, amqppub.WithExchange(benchTopology(b)))
	env := envelope(1, "orders.placed")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := p.Publish(ctx, env); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPublishBatch measures batches of 100 confirmed publishes on one
// channel; msgs/s is the throughput in messages.
func BenchmarkPublishBatch(b *testing.B) {
	const size = 100
	p := newPublisher(b, brokerURL, amqppub.WithExchange(benchTopology(b)))
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
}
