package kafka_test

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/publisher/kafka"
)

func TestPublishMapsEnvelope(t *testing.T) {
	t.Parallel()
	topic := uniqueTopic(t)
	c := newCluster(t, topic)
	p := newPublisher(t, c, nil, kafka.DefaultTopic(topic))

	want := envelope(1, "orders.placed")
	if err := p.Publish(t.Context(), want); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	rec := consume(t, c, topic, 1)[0]
	if got := string(rec.Key); got != want.PartitionKey() {
		t.Errorf("key = %q, want the partition key %q", got, want.PartitionKey())
	}
	if string(rec.Value) != string(want.Payload) {
		t.Errorf("value = %q, want %q", rec.Value, want.Payload)
	}
	h := headerMap(rec)
	wantHeaders := reliar.CloudEventHeaders(want)
	if len(h) != len(wantHeaders) {
		t.Errorf("got %d headers, want %d", len(h), len(wantHeaders))
	}
	for k, v := range wantHeaders {
		if h[k] != v {
			t.Errorf("header %s differs from the CloudEvents mapping", k)
		}
	}
	got, err := reliar.EnvelopeFromHeaders(h, rec.Value)
	if err != nil {
		t.Fatalf("EnvelopeFromHeaders: %v", err)
	}
	if got.ID != want.ID || got.MessageType != want.MessageType || got.OrderingKey != want.OrderingKey {
		t.Errorf("decoded %s/%s/%q, want %s/%s/%q", got.ID, got.MessageType, got.OrderingKey, want.ID, want.MessageType, want.OrderingKey)
	}
}

func TestPartitionKeyWithoutOrderingKey(t *testing.T) {
	t.Parallel()
	topic := uniqueTopic(t)
	c := newCluster(t, topic)
	p := newPublisher(t, c, nil, kafka.DefaultTopic(topic))

	env := envelope(1, "orders.placed")
	env.OrderingKey = ""
	if err := p.Publish(t.Context(), env); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	rec := consume(t, c, topic, 1)[0]
	if got, want := string(rec.Key), env.Metadata.Correlation.ConversationID.String(); got != want {
		t.Errorf("key = %q, want the conversation id %q", got, want)
	}
}

func TestSameKeySamePartitionInOrder(t *testing.T) {
	t.Parallel()
	topic := uniqueTopic(t)
	c := newCluster(t, topic)
	p := newPublisher(t, c, nil, kafka.DefaultTopic(topic))

	const n = 20
	for i := range n {
		env := envelope(i, "orders.placed")
		env.OrderingKey = "one-key"
		if err := p.Publish(t.Context(), env); err != nil {
			t.Fatalf("Publish %d: %v", i, err)
		}
	}
	recs := consume(t, c, topic, n)
	for i, r := range recs {
		if r.Partition != recs[0].Partition {
			t.Fatalf("record %d on partition %d, the first on %d", i, r.Partition, recs[0].Partition)
		}
		if got := headerMap(r)[reliar.HeaderSequence]; got != strconv.Itoa(i+1) {
			t.Fatalf("record %d has sequence %s, want %d", i, got, i+1)
		}
	}
}

func TestTopicMapping(t *testing.T) {
	t.Parallel()
	orders, payments, fallback := uniqueTopic(t), uniqueTopic(t), uniqueTopic(t)
	c := newCluster(t, orders, payments, fallback)

	tests := []struct {
		name      string
		opts      []kafka.Option
		typ       string
		wantTopic string
		wantErr   error
	}{
		{"mapped", []kafka.Option{kafka.Topics(map[string]string{"orders.placed": orders}), kafka.DefaultTopic(fallback)}, "orders.placed", orders, nil},
		{"default", []kafka.Option{kafka.Topics(map[string]string{"orders.placed": orders}), kafka.DefaultTopic(fallback)}, "other.thing", fallback, nil},
		{"unmapped without default", []kafka.Option{kafka.Topics(map[string]string{"orders.placed": orders})}, "other.thing", "", kafka.ErrNoTopic},
		{"func", []kafka.Option{kafka.TopicFunc(func(e *reliar.SerializedEnvelope) string {
			if e.MessageType == "payments.made" {
				return payments
			}
			return orders
		})}, "payments.made", payments, nil},
		{"func gives empty", []kafka.Option{kafka.TopicFunc(func(*reliar.SerializedEnvelope) string { return "" })}, "x", "", kafka.ErrInvalidTopic},
		{"func gives invalid", []kafka.Option{kafka.TopicFunc(func(*reliar.SerializedEnvelope) string { return "no spaces" })}, "x", "", kafka.ErrInvalidTopic},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newPublisher(t, c, nil, tc.opts...)
			env := envelope(1, tc.typ)
			err := p.Publish(t.Context(), env)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) || !reliar.IsPermanent(err) {
					t.Fatalf("Publish = %v, want a permanent %v", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Publish: %v", err)
			}
			found := false
			for _, r := range consume(t, c, tc.wantTopic, 1) {
				found = found || headerMap(r)[reliar.HeaderID] == env.ID.String()
			}
			if !found {
				t.Fatalf("message %s not found first in %s", env.ID, tc.wantTopic)
			}
		})
	}
}

func TestPublishNilEnvelope(t *testing.T) {
	t.Parallel()
	c := newCluster(t, "t")
	p := newPublisher(t, c, nil, kafka.DefaultTopic("t"))
	if err := p.Publish(t.Context(), nil); !reliar.IsPermanent(err) {
		t.Fatalf("Publish(nil) = %v, want a permanent error", err)
	}
}

func TestPublishCancelledContext(t *testing.T) {
	t.Parallel()
	topic := uniqueTopic(t)
	c := newCluster(t, topic)
	p := newPublisher(t, c, nil, kafka.DefaultTopic(topic))

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err := p.Publish(ctx, envelope(1, "orders.placed"))
	if !errors.Is(err, context.Canceled) || reliar.IsPermanent(err) {
		t.Fatalf("Publish = %v, want a transient context.Canceled", err)
	}
	errs := p.PublishBatch(ctx, batch(3, "orders.placed"))
	for i, err := range errs {
		if !errors.Is(err, context.Canceled) || reliar.IsPermanent(err) {
			t.Fatalf("result %d = %v, want a transient context.Canceled", i, err)
		}
	}
}

func batch(n int, typ string) []*reliar.SerializedEnvelope {
	envs := make([]*reliar.SerializedEnvelope, n)
	for i := range envs {
		envs[i] = envelope(i, typ)
	}
	return envs
}
