package broker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"
	"time"

	amqp091 "github.com/rabbitmq/amqp091-go"
	"github.com/redis/go-redis/v9"
)

// unique returns a name of its own for a test's stream, exchange or queue.
func unique(prefix string) string {
	var b [5]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// publish publishes one envelope through b.
func publish(t *testing.T, b *Broker, typ string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := b.Publisher.Publish(ctx, envelope(typ)); err != nil {
		t.Fatalf("Publish: %v", err)
	}
}

// TestRedisPublishesToTheStream: --stream names the stream.
func TestRedisPublishesToTheStream(t *testing.T) {
	stream := unique("relay_test_")
	opts, err := redis.ParseURL(redisURL)
	if err != nil {
		t.Fatal(err)
	}
	client := redis.NewClient(opts)
	defer client.Close()
	t.Cleanup(func() { client.Del(context.Background(), stream) })
	publish(t, open(t, redisURL, Options{Stream: stream}), "order_placed")
	n, err := client.XLen(t.Context(), stream).Result()
	if err != nil || n != 1 {
		t.Fatalf("XLEN %s = %d, %v; want 1", stream, n, err)
	}
}

// TestAMQPPublishesWithTheRoutingKey: --exchange and --routing-key route
// the message to a queue bound by message type.
func TestAMQPPublishesWithTheRoutingKey(t *testing.T) {
	exchange, queue := unique("relay_test_x_"), unique("relay_test_q_")
	conn, err := amqp091.Dial(amqpURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	if err := ch.ExchangeDeclare(exchange, amqp091.ExchangeTopic, false, true, false, false, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ch.QueueDeclare(queue, false, true, false, false, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = ch.QueueDelete(queue, false, false, false)
		_ = ch.ExchangeDelete(exchange, false, false)
	})
	if err := ch.QueueBind(queue, "orders.order_placed", exchange, false, nil); err != nil {
		t.Fatal(err)
	}
	publish(t, open(t, amqpURL, Options{Exchange: exchange, RoutingKey: "orders.{type}", Concurrency: 4}), "order_placed")
	msg, ok, err := ch.Get(queue, true)
	if err != nil || !ok {
		t.Fatalf("Get = %v, %v; want the message", ok, err)
	}
	if msg.RoutingKey != "orders.order_placed" {
		t.Errorf("routing key %q, want orders.order_placed", msg.RoutingKey)
	}
}
