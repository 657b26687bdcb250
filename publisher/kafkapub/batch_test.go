package kafkapub_test

import (
	"context"
	"errors"
	"testing"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/publisher/kafkapub"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestPublishBatchResultsInOrder(t *testing.T) {
	t.Parallel()
	orders, payments, refused := uniqueTopic(t), uniqueTopic(t), uniqueTopic(t)
	c := newCluster(t, orders, payments, refused)
	h := c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: refused, Err: kerr.TopicAuthorizationFailed, Count: -1})
	defer h.Remove()
	topicOf := map[string]string{"orders.placed": orders, "payments.made": payments, "audit.logged": refused}
	p := newPublisher(t, c, nil, kafkapub.WithTopics(topicOf))

	envs := batch(100, "orders.placed")
	want := map[string]int{}
	for i, e := range envs {
		switch {
		case i == 42:
			e.MessageType = "unmapped.type"
		case i%10 == 7:
			e.MessageType = "audit.logged"
		case i%2 == 1:
			e.MessageType = "payments.made"
			want[payments]++
		default:
			want[orders]++
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()
	errs := p.PublishBatch(ctx, envs)
	if len(errs) != len(envs) {
		t.Fatalf("got %d results for %d envelopes", len(errs), len(envs))
	}
	for i, err := range errs {
		switch envs[i].MessageType {
		case "unmapped.type":
			if !errors.Is(err, kafkapub.ErrNoTopic) || reliar.IsPermanent(err) {
				t.Errorf("result %d = %v, want a transient ErrNoTopic", i, err)
			}
		case "audit.logged":
			if !errors.Is(err, kerr.TopicAuthorizationFailed) || reliar.IsPermanent(err) {
				t.Errorf("result %d = %v, want a transient TOPIC_AUTHORIZATION_FAILED", i, err)
			}
		default:
			if err != nil {
				t.Errorf("result %d = %v, want nil", i, err)
			}
		}
	}
	for topic, n := range want {
		got := map[string]bool{}
		for _, r := range consume(t, c, topic, n) {
			got[headerMap(r)["ce_id"]] = true
		}
		for _, e := range envs {
			if topicOf[e.MessageType] == topic && !got[e.ID.String()] {
				t.Errorf("message %s missing from %s", e.ID, topic)
			}
		}
	}
}

func TestPublishBatchEmpty(t *testing.T) {
	t.Parallel()
	c := newCluster(t, "t")
	p := newPublisher(t, c, nil, kafkapub.WithDefaultTopic("t"))
	if errs := p.PublishBatch(t.Context(), nil); len(errs) != 0 {
		t.Fatalf("PublishBatch(nil) = %v, want no results", errs)
	}
}

// TestPublishBatchContextEnds holds the produce request in the broker and
// ends the context: every result is a transient context error.
func TestPublishBatchContextEnds(t *testing.T) {
	t.Parallel()
	topic := uniqueTopic(t)
	c := newCluster(t, topic)
	release := make(chan struct{})
	held := make(chan struct{}, 1)
	c.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		select {
		case held <- struct{}{}:
		default:
		}
		c.KeepControl()
		c.SleepControl(func() { <-release })
		return nil, nil, false
	})
	defer close(release)
	p := newPublisher(t, c, nil, kafkapub.WithDefaultTopic(topic))

	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan []error, 1)
	go func() { errc <- p.PublishBatch(ctx, batch(10, "orders.placed")) }()
	<-held
	cancel()
	for i, err := range <-errc {
		if !errors.Is(err, context.Canceled) || reliar.IsPermanent(err) {
			t.Errorf("result %d = %v, want a transient context.Canceled", i, err)
		}
	}
}
