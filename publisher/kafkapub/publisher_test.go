package kafkapub_test

import (
	"context"
	"errors"
	"maps"
	"strconv"
	"testing"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/publisher/kafkapub"
)

func TestPublishMapsEnvelope(t *testing.T) {
	t.Parallel()
	topic := uniqueTopic(t)
	c := newCluster(t, topic)
	p := newPublisher(t, c, nil, kafkapub.WithDefaultTopic(topic))

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
	// The Kafka binding's names: ce_ attributes, content-type for the
	// data content type; the W3C trace header and user headers as they
	// are.
	h := headerMap(rec)
	wantHeaders := map[string]string{
		"ce_id":             want.ID.String(),
		"ce_type":           want.MessageType,
		"ce_specversion":    "1.0",
		"ce_source":         "kafka-test",
		"ce_time":           want.Metadata.Delivery.SentAt.Format(time.RFC3339Nano),
		"content-type":      "application/json",
		"ce_messageversion": "2",
		"ce_correlationid":  "corr-1",
		"ce_conversationid": want.Metadata.Correlation.ConversationID.String(),
		"ce_causationid":    want.Metadata.Correlation.CausationID.String(),
		"ce_tenantid":       "tenant-a",
		"ce_replyto":        "replies",
		"ce_partitionkey":   want.OrderingKey,
		"ce_sequence":       "2",
		"ce_traceparent":    want.Metadata.Trace.Traceparent,
		"traceparent":       want.Metadata.Trace.Traceparent,
		"x-seq":             "1",
	}
	if !maps.Equal(h, wantHeaders) {
		t.Errorf("headers %v\nwant    %v", h, wantHeaders)
	}
	got, err := kafkapub.Envelope(rec)
	if err != nil {
		t.Fatalf("Envelope: %v", err)
	}
	if got.ID != want.ID || got.MessageType != want.MessageType || got.OrderingKey != want.OrderingKey {
		t.Errorf("decoded %s/%s/%q, want %s/%s/%q", got.ID, got.MessageType, got.OrderingKey, want.ID, want.MessageType, want.OrderingKey)
	}
}

func TestPartitionKeyWithoutOrderingKey(t *testing.T) {
	t.Parallel()
	topic := uniqueTopic(t)
	c := newCluster(t, topic)
	p := newPublisher(t, c, nil, kafkapub.WithDefaultTopic(topic))

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
	p := newPublisher(t, c, nil, kafkapub.WithDefaultTopic(topic))

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
		if got := headerMap(r)["ce_sequence"]; got != strconv.Itoa(i+1) {
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
		opts      []kafkapub.Option
		typ       string
		wantTopic string
		wantErr   error
		transient bool
	}{
		{"mapped", []kafkapub.Option{kafkapub.WithTopics(map[string]string{"orders.placed": orders}), kafkapub.WithDefaultTopic(fallback)}, "orders.placed", orders, nil, false},
		{"default", []kafkapub.Option{kafkapub.WithTopics(map[string]string{"orders.placed": orders}), kafkapub.WithDefaultTopic(fallback)}, "other.thing", fallback, nil, false},
		{"unmapped without default", []kafkapub.Option{kafkapub.WithTopics(map[string]string{"orders.placed": orders})}, "other.thing", "", kafkapub.ErrNoTopic, true},
		{"func", []kafkapub.Option{kafkapub.WithTopicFunc(func(e *reliar.SerializedEnvelope) string {
			if e.MessageType == "payments.made" {
				return payments
			}
			return orders
		})}, "payments.made", payments, nil, false},
		{"func gives empty", []kafkapub.Option{kafkapub.WithTopicFunc(func(*reliar.SerializedEnvelope) string { return "" })}, "x", "", kafkapub.ErrInvalidTopic, false},
		{"func gives invalid", []kafkapub.Option{kafkapub.WithTopicFunc(func(*reliar.SerializedEnvelope) string { return "no spaces" })}, "x", "", kafkapub.ErrInvalidTopic, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newPublisher(t, c, nil, tc.opts...)
			env := envelope(1, tc.typ)
			err := p.Publish(t.Context(), env)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) || reliar.IsPermanent(err) == tc.transient {
					t.Fatalf("Publish = %v, want %v (transient: %v)", err, tc.wantErr, tc.transient)
				}
				return
			}
			if err != nil {
				t.Fatalf("Publish: %v", err)
			}
			found := false
			for _, r := range consume(t, c, tc.wantTopic, 1) {
				found = found || headerMap(r)["ce_id"] == env.ID.String()
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
	p := newPublisher(t, c, nil, kafkapub.WithDefaultTopic("t"))
	if err := p.Publish(t.Context(), nil); !reliar.IsPermanent(err) {
		t.Fatalf("Publish(nil) = %v, want a permanent error", err)
	}
}

func TestPublishCancelledContext(t *testing.T) {
	t.Parallel()
	topic := uniqueTopic(t)
	c := newCluster(t, topic)
	p := newPublisher(t, c, nil, kafkapub.WithDefaultTopic(topic))

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
