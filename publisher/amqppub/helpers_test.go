package amqppub_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	amqp091 "github.com/rabbitmq/amqp091-go"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/publisher/amqppub"
)

// brokerURL is the RabbitMQ the tests run against.
const brokerURL = "amqp://guest:guest@127.0.0.1:5672/"

const waitTimeout = 10 * time.Second

var nameSeq atomic.Int64

// uniqueName returns a name no other test uses.
func uniqueName(prefix string) string {
	return fmt.Sprintf("reliar-test-%s-%d-%d", prefix, time.Now().UnixNano(), nameSeq.Add(1))
}

// quiet discards the publisher's logs.
var quiet = amqppub.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))

// topology is an exchange and a queue bound to it, declared for one test
// and deleted when it ends, with a consumer of the queue.
type topology struct {
	exchange, queue string
	deliveries      <-chan amqp091.Delivery
	admin           *amqp091.Channel
}

// binding says how a test's queue is bound to its exchange.
type binding struct {
	kind string // exchange type
	key  string // binding key
	args amqp091.Table
}

// everything binds a topic exchange for every routing key.
var everything = binding{kind: amqp091.ExchangeTopic, key: "#"}

// newTopology declares a fresh exchange and queue with b and starts
// consuming the queue. The broker must be up: a test fails, never skips,
// without it.
func newTopology(t testing.TB, b binding) *topology {
	t.Helper()
	conn, err := amqp091.Dial(brokerURL)
	if err != nil {
		t.Fatalf("RabbitMQ at %s: %v", brokerURL, err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	ch, err := conn.Channel()
	if err != nil {
		t.Fatalf("channel: %v", err)
	}
	top := &topology{exchange: uniqueName("x"), queue: uniqueName("q"), admin: ch}
	if err := ch.ExchangeDeclare(top.exchange, b.kind, true, false, false, false, nil); err != nil {
		t.Fatalf("declare exchange: %v", err)
	}
	if _, err := ch.QueueDeclare(top.queue, true, false, false, false, nil); err != nil {
		t.Fatalf("declare queue: %v", err)
	}
	t.Cleanup(func() {
		// The admin channel may have been closed by the test; use a new one.
		ch, err := conn.Channel()
		if err != nil {
			t.Errorf("cleanup channel: %v", err)
			return
		}
		if _, err := ch.QueueDelete(top.queue, false, false, false); err != nil {
			t.Errorf("delete queue %s: %v", top.queue, err)
		}
		if err := ch.ExchangeDelete(top.exchange, false, false); err != nil {
			t.Errorf("delete exchange %s: %v", top.exchange, err)
		}
	})
	if err := ch.QueueBind(top.queue, b.key, top.exchange, false, b.args); err != nil {
		t.Fatalf("bind queue: %v", err)
	}
	consumer, err := conn.Channel()
	if err != nil {
		t.Fatalf("consumer channel: %v", err)
	}
	top.deliveries, err = consumer.Consume(top.queue, "", true, false, false, false, nil)
	if err != nil {
		t.Fatalf("consume: %v", err)
	}
	return top
}

// receive returns the next n deliveries, failing the test when they do
// not arrive in time.
func (top *topology) receive(t *testing.T, n int) []amqp091.Delivery {
	t.Helper()
	timeout := time.After(waitTimeout)
	var got []amqp091.Delivery
	for len(got) < n {
		select {
		case d := <-top.deliveries:
			got = append(got, d)
		case <-timeout:
			t.Fatalf("received %d of %d messages from %s", len(got), n, top.queue)
		}
	}
	return got
}

// expectNothing fails the test when a message arrives within d.
func (top *topology) expectNothing(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case m := <-top.deliveries:
		t.Fatalf("unexpected message %s arrived", m.MessageId)
	case <-time.After(d):
	}
}

// newPublisher returns a publisher to exchange at url, closed when the
// test ends.
func newPublisher(t testing.TB, url string, opts ...amqppub.Option) *amqppub.Publisher {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	p, err := amqppub.New(ctx, url, append([]amqppub.Option{quiet}, opts...)...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return p
}

// envelope returns a message of type typ with every metadata field set.
func envelope(seq int, typ string) *reliar.SerializedEnvelope {
	causation := uuid.New()
	sent := time.Now().UTC().Truncate(time.Microsecond)
	return &reliar.SerializedEnvelope{
		ID:             reliar.NewMessageID(),
		MessageType:    typ,
		MessageVersion: 2,
		ContentType:    "application/json",
		Payload:        fmt.Appendf(nil, `{"seq":%d}`, seq),
		Metadata: reliar.Metadata{
			Correlation: reliar.Correlation{
				CorrelationID:  "corr-" + strconv.Itoa(seq),
				ConversationID: uuid.New(),
				CausationID:    &causation,
			},
			Routing:  reliar.Routing{Source: "amqp-test", ReplyTo: "replies"},
			Delivery: reliar.Delivery{SentAt: &sent, ContentType: "application/json"},
			TenantID: "tenant-a",
		},
		Headers:     map[string]string{"x-seq": strconv.Itoa(seq)},
		OrderingKey: "key-" + strconv.Itoa(seq%4),
		Sequence:    int64(seq) + 1,
		Attempt:     1,
		CreatedAt:   sent,
	}
}

func batch(n int, typ string) []*reliar.SerializedEnvelope {
	envs := make([]*reliar.SerializedEnvelope, n)
	for i := range envs {
		envs[i] = envelope(i, typ)
	}
	return envs
}

// stringHeaders converts a delivery's header table to strings.
func stringHeaders(h amqp091.Table) map[string]string {
	m := make(map[string]string, len(h))
	for k, v := range h {
		m[k] = fmt.Sprint(v)
	}
	return m
}

// timeout returns a context ending after waitTimeout.
func timeout(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	t.Cleanup(cancel)
	return ctx
}

// bareExchange declares a fresh topic exchange with no queue bound,
// deleted when the test ends.
func bareExchange(t testing.TB) string {
	t.Helper()
	conn, err := amqp091.Dial(brokerURL)
	if err != nil {
		t.Fatalf("RabbitMQ at %s: %v", brokerURL, err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatalf("channel: %v", err)
	}
	name := uniqueName("bare")
	if err := ch.ExchangeDeclare(name, amqp091.ExchangeTopic, true, false, false, false, nil); err != nil {
		t.Fatalf("declare exchange: %v", err)
	}
	t.Cleanup(func() {
		conn, err := amqp091.Dial(brokerURL)
		if err != nil {
			t.Errorf("cleanup: %v", err)
			return
		}
		defer conn.Close()
		ch, err := conn.Channel()
		if err == nil {
			err = ch.ExchangeDelete(name, false, false)
		}
		if err != nil {
			t.Errorf("delete exchange %s: %v", name, err)
		}
	})
	return name
}

// overMaxMessageSize is one byte over RabbitMQ's default max_message_size
// (128 MiB, the highest default of any version): such a message makes the
// broker close the channel with PRECONDITION_FAILED.
const overMaxMessageSize = 128<<20 + 1

// bindFrom binds the topology's queue to exchange ex (a topic exchange)
// for every routing key, as an operator fixing the routing would.
func (top *topology) bindFrom(t testing.TB, ex string) {
	t.Helper()
	conn, err := amqp091.Dial(brokerURL)
	if err != nil {
		t.Fatalf("RabbitMQ at %s: %v", brokerURL, err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatalf("channel: %v", err)
	}
	if err := ch.QueueBind(top.queue, "#", ex, false, nil); err != nil {
		t.Fatalf("bind %s to %s: %v", top.queue, ex, err)
	}
}
