package amqppub_test

import (
	"context"
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	amqp091 "github.com/rabbitmq/amqp091-go"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/publisher/amqppub"
)

func TestPublishMapsMessage(t *testing.T) {
	t.Parallel()
	top := newTopology(t, everything)
	p := newPublisher(t, brokerURL, amqppub.WithExchange(top.exchange))

	env := envelope(1, "orders.placed")
	if err := p.Publish(timeout(t), env); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	d := top.receive(t, 1)[0]
	checks := []struct {
		name      string
		got, want any
	}{
		{"routing key", d.RoutingKey, env.PartitionKey()},
		{"exchange", d.Exchange, top.exchange},
		{"delivery mode", d.DeliveryMode, amqp091.Persistent},
		{"message id", d.MessageId, env.ID.String()},
		{"type", d.Type, env.MessageType},
		{"content type", d.ContentType, env.ContentType},
		{"correlation id", d.CorrelationId, env.Metadata.Correlation.CorrelationID},
		{"reply-to", d.ReplyTo, env.Metadata.Routing.ReplyTo},
		{"timestamp", d.Timestamp.Unix(), env.Metadata.Delivery.SentAt.Unix()},
		{"body", string(d.Body), string(env.Payload)},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	// The AMQP binding's names: cloudEvents: application properties,
	// strings all (the 0-9-1 timestamp type would cut time's fraction);
	// the data content type is the content-type property, not a header.
	want := map[string]string{
		"cloudEvents:id":             env.ID.String(),
		"cloudEvents:type":           env.MessageType,
		"cloudEvents:specversion":    "1.0",
		"cloudEvents:source":         env.Metadata.Routing.Source,
		"cloudEvents:time":           env.Metadata.Delivery.SentAt.Format(time.RFC3339Nano),
		"cloudEvents:messageversion": "2",
		"cloudEvents:correlationid":  env.Metadata.Correlation.CorrelationID,
		"cloudEvents:conversationid": env.Metadata.Correlation.ConversationID.String(),
		"cloudEvents:causationid":    env.Metadata.Correlation.CausationID.String(),
		"cloudEvents:tenantid":       env.Metadata.TenantID,
		"cloudEvents:replyto":        env.Metadata.Routing.ReplyTo,
		"cloudEvents:partitionkey":   env.OrderingKey,
		"cloudEvents:sequence":       "2",
	}
	for k, v := range env.Headers {
		want[k] = v
	}
	if got := stringHeaders(d.Headers); !maps.Equal(got, want) {
		t.Errorf("headers %v\nwant    %v", got, want)
	}
	for k, v := range d.Headers {
		if _, ok := v.(string); !ok {
			t.Errorf("header %s is a %T, want a string", k, v)
		}
	}
	got, err := amqppub.Envelope(d)
	if err != nil {
		t.Fatalf("Envelope: %v", err)
	}
	if got.ID != env.ID || got.OrderingKey != env.OrderingKey || got.Sequence != env.Sequence {
		t.Errorf("decoded %s/%q/%d, want %s/%q/%d", got.ID, got.OrderingKey, got.Sequence, env.ID, env.OrderingKey, env.Sequence)
	}
}

func TestRoutingKeyFuncAndDefaultExchange(t *testing.T) {
	t.Parallel()
	top := newTopology(t, everything)
	// The default exchange routes by queue name.
	p := newPublisher(t, brokerURL, amqppub.WithExchange(""), amqppub.WithRoutingKeyFunc(func(*reliar.SerializedEnvelope) string {
		return top.queue
	}))
	env := envelope(1, "orders.placed")
	if err := p.Publish(timeout(t), env); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	d := top.receive(t, 1)[0]
	if d.MessageId != env.ID.String() || d.RoutingKey != top.queue || d.Exchange != "" {
		t.Fatalf("got %s via %q/%q, want %s via the default exchange", d.MessageId, d.Exchange, d.RoutingKey, env.ID)
	}
}

// TestUnroutableIsTransient: a message no queue is bound for comes back
// as a return, transient (binding a queue fixes it for every message).
func TestUnroutableIsTransient(t *testing.T) {
	t.Parallel()
	top := newTopology(t, binding{kind: amqp091.ExchangeTopic, key: "good.#"})
	p := newPublisher(t, brokerURL, amqppub.WithExchange(top.exchange), amqppub.WithRoutingKeyFunc(func(e *reliar.SerializedEnvelope) string {
		return e.MessageType
	}))

	err := p.Publish(timeout(t), envelope(1, "bad.thing"))
	var re *amqppub.ReturnError
	if !errors.As(err, &re) || !errors.Is(err, amqppub.ErrUnroutable) || reliar.IsPermanent(err) {
		t.Fatalf("Publish = %v, want a transient *ReturnError", err)
	}
	if re.ReplyCode != amqp091.NoRoute || re.Exchange != top.exchange || re.RoutingKey != "bad.thing" {
		t.Errorf("return = %+v, want NO_ROUTE from %s for bad.thing", re, top.exchange)
	}
	// The channel stays usable: a routable message goes through.
	env := envelope(2, "good.thing")
	if err := p.Publish(timeout(t), env); err != nil {
		t.Fatalf("Publish after a return: %v", err)
	}
	if d := top.receive(t, 1)[0]; d.MessageId != env.ID.String() {
		t.Fatalf("received %s, want %s", d.MessageId, env.ID)
	}
}

func TestPublishBatchResultsInOrder(t *testing.T) {
	t.Parallel()
	top := newTopology(t, binding{kind: amqp091.ExchangeTopic, key: "good.#"})
	p := newPublisher(t, brokerURL, amqppub.WithExchange(top.exchange), amqppub.WithRoutingKeyFunc(func(e *reliar.SerializedEnvelope) string {
		return e.MessageType
	}))

	// More than one confirmation window, with unroutable and invalid
	// messages spread through it.
	envs := batch(300, "good.thing")
	good := map[string]bool{}
	for i, e := range envs {
		switch {
		case i%7 == 3:
			e.MessageType = "bad.thing"
		case i == 200:
			e.Metadata.Correlation.CorrelationID = strings.Repeat("c", 256)
		default:
			good[e.ID.String()] = true
		}
	}
	envs = append(envs, nil)
	errs := p.PublishBatch(timeout(t), envs)
	if len(errs) != len(envs) {
		t.Fatalf("got %d results for %d envelopes", len(errs), len(envs))
	}
	for i, err := range errs {
		switch {
		case envs[i] == nil:
			if !reliar.IsPermanent(err) {
				t.Errorf("result of the nil envelope = %v, want permanent", err)
			}
		case i == 200:
			if !errors.Is(err, amqppub.ErrInvalidMessage) || !reliar.IsPermanent(err) {
				t.Errorf("result %d = %v, want a permanent ErrInvalidMessage", i, err)
			}
		case envs[i].MessageType == "bad.thing":
			if !errors.Is(err, amqppub.ErrUnroutable) || reliar.IsPermanent(err) {
				t.Errorf("result %d = %v, want a transient ErrUnroutable", i, err)
			}
		case err != nil:
			t.Errorf("result %d = %v, want nil", i, err)
		}
	}
	for _, d := range top.receive(t, len(good)) {
		if !good[d.MessageId] {
			t.Errorf("received %s, which should not have been routed or was received twice", d.MessageId)
		}
		delete(good, d.MessageId)
	}
	top.expectNothing(t, 200*time.Millisecond)
	if errs := p.PublishBatch(t.Context(), nil); len(errs) != 0 {
		t.Errorf("PublishBatch(nil) = %v, want no results", errs)
	}
}

func TestInvalidMessageIsPermanent(t *testing.T) {
	t.Parallel()
	top := newTopology(t, everything)
	long := strings.Repeat("k", 256)
	tests := []struct {
		name   string
		opts   []amqppub.Option
		modify func(*reliar.SerializedEnvelope)
	}{
		{"routing key", []amqppub.Option{amqppub.WithRoutingKeyFunc(func(*reliar.SerializedEnvelope) string { return long })}, func(*reliar.SerializedEnvelope) {}},
		{"message type", nil, func(e *reliar.SerializedEnvelope) { e.MessageType = long }},
		{"content type", nil, func(e *reliar.SerializedEnvelope) { e.ContentType = long }},
		{"reply-to", nil, func(e *reliar.SerializedEnvelope) { e.Metadata.Routing.ReplyTo = long }},
		{"header name", nil, func(e *reliar.SerializedEnvelope) { e.Headers[long] = "v" }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newPublisher(t, brokerURL, append([]amqppub.Option{amqppub.WithExchange(top.exchange)}, tc.opts...)...)
			env := envelope(1, "orders.placed")
			tc.modify(env)
			err := p.Publish(timeout(t), env)
			if !errors.Is(err, amqppub.ErrInvalidMessage) || !reliar.IsPermanent(err) {
				t.Fatalf("Publish = %v, want a permanent ErrInvalidMessage", err)
			}
		})
	}
}

func TestMissingExchange(t *testing.T) {
	t.Parallel()
	ctx := timeout(t)
	_, err := amqppub.New(ctx, brokerURL, quiet, amqppub.WithExchange(uniqueName("missing")))
	var ae *amqp091.Error
	if !errors.As(err, &ae) || ae.Code != amqp091.NotFound || reliar.IsPermanent(err) {
		t.Fatalf("New = %v, want a transient NOT_FOUND", err)
	}
}

// TestExchangeDeletedThenRestored deletes the exchange under a running
// publisher: the broker closes the channel with NOT_FOUND, which is
// transient (every message shares it); once the exchange is back, the
// publisher opens a new channel and publishes again.
func TestExchangeDeletedThenRestored(t *testing.T) {
	t.Parallel()
	top := newTopology(t, everything)
	p := newPublisher(t, brokerURL, amqppub.WithExchange(top.exchange), amqppub.WithPoolSize(1))
	if err := p.Publish(timeout(t), envelope(0, "orders.placed")); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	top.receive(t, 1)

	if err := top.admin.ExchangeDelete(top.exchange, false, false); err != nil {
		t.Fatalf("delete exchange: %v", err)
	}
	err := p.Publish(timeout(t), envelope(1, "orders.placed"))
	var ae *amqp091.Error
	if !errors.As(err, &ae) || ae.Code != amqp091.NotFound || reliar.IsPermanent(err) {
		t.Fatalf("Publish to a deleted exchange = %v, want a transient NOT_FOUND", err)
	}
	errs := p.PublishBatch(timeout(t), batch(3, "orders.placed"))
	for i, err := range errs {
		if !errors.As(err, &ae) || ae.Code != amqp091.NotFound || reliar.IsPermanent(err) {
			t.Fatalf("batch result %d = %v, want a transient NOT_FOUND", i, err)
		}
	}

	if err := top.admin.ExchangeDeclare(top.exchange, amqp091.ExchangeTopic, true, false, false, false, nil); err != nil {
		t.Fatalf("declare exchange: %v", err)
	}
	if err := top.admin.QueueBind(top.queue, "#", top.exchange, false, nil); err != nil {
		t.Fatalf("bind queue: %v", err)
	}
	env := envelope(2, "orders.placed")
	if err := p.Publish(timeout(t), env); err != nil {
		t.Fatalf("Publish after the exchange is back: %v", err)
	}
	if d := top.receive(t, 1)[0]; d.MessageId != env.ID.String() {
		t.Fatalf("received %s, want %s", d.MessageId, env.ID)
	}
}

func TestCancelledContext(t *testing.T) {
	t.Parallel()
	top := newTopology(t, everything)
	p := newPublisher(t, brokerURL, amqppub.WithExchange(top.exchange))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := p.Publish(ctx, envelope(1, "orders.placed")); !errors.Is(err, context.Canceled) || reliar.IsPermanent(err) {
		t.Fatalf("Publish = %v, want a transient context.Canceled", err)
	}
	top.expectNothing(t, 100*time.Millisecond)
}

// TestPoolWaitHonoursContext takes the only channel of the pool and checks
// that a second call gives up with its context.
func TestPoolWaitHonoursContext(t *testing.T) {
	t.Parallel()
	top := newTopology(t, everything)
	p := newPublisher(t, brokerURL, amqppub.WithExchange(top.exchange), amqppub.WithPoolSize(1))
	release, err := p.HoldChannel(timeout(t))
	if err != nil {
		t.Fatalf("hold the channel: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	if err := p.Publish(ctx, envelope(1, "orders.placed")); !errors.Is(err, context.DeadlineExceeded) || reliar.IsPermanent(err) {
		t.Fatalf("Publish = %v, want a transient deadline error", err)
	}
	release()
	if err := p.Publish(timeout(t), envelope(2, "orders.placed")); err != nil {
		t.Fatalf("Publish once the channel is free: %v", err)
	}
	top.receive(t, 1)
}

func TestClose(t *testing.T) {
	t.Parallel()
	top := newTopology(t, everything)
	p, err := amqppub.New(timeout(t), brokerURL, quiet, amqppub.WithExchange(top.exchange))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if err := p.Publish(timeout(t), envelope(1, "orders.placed")); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	for i := range 2 {
		if err := p.Close(); err != nil {
			t.Fatalf("Close %d: %v", i+1, err)
		}
	}
	err = p.Publish(timeout(t), envelope(2, "orders.placed"))
	if !errors.Is(err, amqppub.ErrClosed) || reliar.IsPermanent(err) {
		t.Fatalf("Publish after Close = %v, want a transient ErrClosed", err)
	}
}
