package kafkapub_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/publisher/kafkapub"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestProduceErrorClassification injects an error into every produce
// request of a topic and checks the kind Publish gives it.
func TestProduceErrorClassification(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		err       *kerr.Error
		permanent bool
	}{
		// Misconfigurations every message shares: an operator fixes them.
		{"topic authorization", kerr.TopicAuthorizationFailed, false},
		{"SASL authentication", kerr.SaslAuthenticationFailed, false},
		// The record was checked against the topic's limit before it
		// was sent: a batch too large held records that each fit.
		{"message too large", kerr.MessageTooLarge, false},
		{"record list too large", kerr.RecordListTooLarge, false},
		{"invalid record", kerr.InvalidRecord, true},
		{"not leader, retries exhausted", kerr.NotLeaderForPartition, false},
		{"storage error, retries exhausted", kerr.KafkaStorageError, false},
		{"not enough replicas, retries exhausted", kerr.NotEnoughReplicas, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			topic := uniqueTopic(t)
			c := newCluster(t, topic)
			h := c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: topic, Err: tc.err, Count: -1})
			defer h.Remove()
			p := newPublisher(t, c, append(fastRetries(), kgo.RecordRetries(2)), kafkapub.WithDefaultTopic(topic))

			ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
			defer cancel()
			err := p.Publish(ctx, envelope(1, "orders.placed"))
			if err == nil {
				t.Fatal("Publish succeeded under an injected error")
			}
			if !errors.Is(err, tc.err) {
				t.Fatalf("Publish = %v, want it to wrap %v", err, tc.err)
			}
			if got := reliar.IsPermanent(err); got != tc.permanent {
				t.Fatalf("IsPermanent(%v) = %v, want %v", err, got, tc.permanent)
			}
		})
	}
}

// TestRetriableErrorRetriedUntilContext shows that, with franz-go's
// default unlimited retries, a retriable broker error keeps the record
// buffered until the context ends, which is transient.
func TestRetriableErrorRetriedUntilContext(t *testing.T) {
	t.Parallel()
	topic := uniqueTopic(t)
	c := newCluster(t, topic)
	h := c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: topic, Err: kerr.NotEnoughReplicas, Count: -1})
	p := newPublisher(t, c, fastRetries(), kafkapub.WithDefaultTopic(topic))

	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := p.Publish(ctx, envelope(1, "orders.placed"))
	if !errors.Is(err, context.DeadlineExceeded) || reliar.IsPermanent(err) {
		t.Fatalf("Publish = %v, want a transient deadline error", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("Publish returned after %v, long past its deadline", d)
	}
	// Once the broker recovers, publishing works again.
	h.Remove()
	ctx, cancel = context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()
	if err := p.Publish(ctx, envelope(2, "orders.placed")); err != nil {
		t.Fatalf("Publish after recovery: %v", err)
	}
}

// TestTransientFaultRetriedByClient shows that a passing broker error never
// reaches the caller: franz-go retries it under the idempotent producer.
func TestTransientFaultRetriedByClient(t *testing.T) {
	t.Parallel()
	topic := uniqueTopic(t)
	c := newCluster(t, topic)
	h := c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: topic, Err: kerr.NotLeaderForPartition, Count: 2})
	defer h.Remove()
	p := newPublisher(t, c, fastRetries(), kafkapub.WithDefaultTopic(topic))

	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()
	if err := p.Publish(ctx, envelope(1, "orders.placed")); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	if hits := h.Hits(); hits != 2 {
		t.Fatalf("the fault answered %d requests, want 2", hits)
	}
	consume(t, c, topic, 1)
}

// TestControlledProduceError answers a produce request through ControlKey
// with a hand-built response carrying a topic authorization error.
func TestControlledProduceError(t *testing.T) {
	t.Parallel()
	topic := uniqueTopic(t)
	c := newCluster(t, topic)
	c.ControlKey(int16(kmsg.Produce), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		preq := req.(*kmsg.ProduceRequest)
		resp := preq.ResponseKind().(*kmsg.ProduceResponse)
		for _, rt := range preq.Topics {
			st := kmsg.NewProduceResponseTopic()
			st.Topic = rt.Topic
			st.TopicID = rt.TopicID
			for _, rp := range rt.Partitions {
				sp := kmsg.NewProduceResponseTopicPartition()
				sp.Partition = rp.Partition
				sp.ErrorCode = kerr.TopicAuthorizationFailed.Code
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})
	p := newPublisher(t, c, nil, kafkapub.WithDefaultTopic(topic))

	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()
	err := p.Publish(ctx, envelope(1, "orders.placed"))
	if !errors.Is(err, kerr.TopicAuthorizationFailed) || reliar.IsPermanent(err) {
		t.Fatalf("Publish = %v, want a transient TOPIC_AUTHORIZATION_FAILED", err)
	}
}

// TestUnknownTopicIsTransient publishes to a topic the cluster does not
// have yet (kfake does not create topics on demand), twice: the second
// time franz-go paces its metadata refreshes, and the failure must still
// come well within a publish timeout. Once the operator creates the topic,
// the same publisher delivers.
func TestUnknownTopicIsTransient(t *testing.T) {
	t.Parallel()
	c := newCluster(t, uniqueTopic(t))
	missing := uniqueTopic(t)
	p := newPublisher(t, c, []kgo.Opt{kgo.MetadataMinAge(50 * time.Millisecond)}, kafkapub.WithDefaultTopic(missing))

	for i := range 2 {
		ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
		start := time.Now()
		err := p.Publish(ctx, envelope(i, "orders.placed"))
		cancel()
		if !errors.Is(err, kerr.UnknownTopicOrPartition) || reliar.IsPermanent(err) {
			t.Fatalf("Publish %d = %v, want a transient UNKNOWN_TOPIC_OR_PARTITION", i, err)
		}
		if !strings.Contains(err.Error(), missing) {
			t.Errorf("error %q does not name the topic", err)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("Publish %d took %v to report the unknown topic", i, d)
		}
	}
	createTopic(t, c, missing, nil)
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()
	env := envelope(9, "orders.placed")
	var err error
	for err = p.Publish(ctx, env); err != nil && ctx.Err() == nil; err = p.Publish(ctx, env) {
		if reliar.IsPermanent(err) {
			t.Fatalf("Publish after the topic was created: %v", err)
		}
	}
	if err != nil {
		t.Fatalf("Publish never succeeded after the topic was created: %v", err)
	}
	if id, err := kafkapub.MessageID(consume(t, c, missing, 1)[0]); err != nil || id != env.ID {
		t.Fatalf("consumed %v, %v; want %s", id, err, env.ID)
	}
}

// TestRecordTooLargeForClient checks that a record over the client's own
// batch limit fails permanently before anything is sent.
func TestRecordTooLargeForClient(t *testing.T) {
	t.Parallel()
	topic := uniqueTopic(t)
	c := newCluster(t, topic)
	p := newPublisher(t, c, []kgo.Opt{kgo.ProducerBatchMaxBytes(1024)}, kafkapub.WithDefaultTopic(topic))

	env := envelope(1, "orders.placed")
	env.Payload = make([]byte, 4096)
	err := p.Publish(t.Context(), env)
	if !errors.Is(err, kafkapub.ErrTooLarge) || !reliar.IsPermanent(err) {
		t.Fatalf("Publish = %v, want a permanent ErrTooLarge", err)
	}
}

// TestTopicLimit reads max.message.bytes from the broker: a record over it
// fails permanently with that reason and is never sent; one just under it
// is delivered, so the check counts exactly what the broker counts.
func TestTopicLimit(t *testing.T) {
	t.Parallel()
	topic := uniqueTopic(t)
	c := newCluster(t)
	const limit = 2048
	createTopic(t, c, topic, map[string]string{"max.message.bytes": strconv.Itoa(limit)})
	p := newPublisher(t, c, nil, kafkapub.WithDefaultTopic(topic))

	env := envelope(1, "orders.placed")
	env.Payload = make([]byte, limit)
	err := p.Publish(t.Context(), env)
	if !errors.Is(err, kafkapub.ErrTooLarge) || !reliar.IsPermanent(err) || !strings.Contains(err.Error(), strconv.Itoa(limit)) {
		t.Fatalf("Publish = %v, want a permanent ErrTooLarge naming the limit %d", err, limit)
	}
	// Grow the payload to the largest record batch the topic takes.
	env.Payload = nil
	base := kafkapub.BatchSize(t, env, topic)
	env.Payload = make([]byte, limit-base-8)
	for kafkapub.BatchSize(t, env, topic) < limit {
		env.Payload = append(env.Payload, 0)
	}
	if got := kafkapub.BatchSize(t, env, topic); got != limit {
		t.Fatalf("batch of %d bytes, want exactly %d", got, limit)
	}
	if err := p.Publish(t.Context(), env); err != nil {
		t.Fatalf("Publish of a record batch of exactly max.message.bytes: %v", err)
	}
	env.Payload = append(env.Payload, 0)
	if err := p.Publish(t.Context(), env); !errors.Is(err, kafkapub.ErrTooLarge) {
		t.Fatalf("Publish one byte over the limit = %v, want ErrTooLarge", err)
	}
	if id, err := kafkapub.MessageID(consume(t, c, topic, 1)[0]); err != nil {
		t.Fatalf("consumed %v, %v", id, err)
	}
}

// TestBrokerUnreachable points the publisher at a closed port: Publish
// must fail transiently by its deadline.
func TestBrokerUnreachable(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	addrs := c.ListenAddrs()
	c.Close()
	cl, err := kafkapub.NewClient(addrs)
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	defer cl.Close()
	p, err := kafkapub.New(cl, kafkapub.WithDefaultTopic("t"))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	err = p.Publish(ctx, envelope(1, "orders.placed"))
	if err == nil || reliar.IsPermanent(err) {
		t.Fatalf("Publish = %v, want a transient error", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("Publish returned after %v, long past its deadline", d)
	}
}

// TestAmbiguousOutcome holds a produce request inside the broker past the
// publish deadline: Publish reports a transient error at once, and the
// record still lands when the broker answers — the fourth duplicate window.
func TestAmbiguousOutcome(t *testing.T) {
	t.Parallel()
	topic := uniqueTopic(t)
	c := newCluster(t, topic)
	release := make(chan struct{})
	held := make(chan struct{})
	c.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		close(held)
		c.SleepControl(func() { <-release })
		return nil, nil, false
	})
	p := newPublisher(t, c, nil, kafkapub.WithDefaultTopic(topic))

	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()
	pubCtx, pubCancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() { errc <- p.Publish(pubCtx, envelope(1, "orders.placed")) }()
	select {
	case <-held:
	case <-ctx.Done():
		t.Fatal("the produce request never reached the broker")
	}
	pubCancel()
	err := <-errc
	if !errors.Is(err, context.Canceled) || reliar.IsPermanent(err) {
		t.Fatalf("Publish = %v, want a transient context.Canceled", err)
	}
	close(release)
	consume(t, c, topic, 1)
}

func TestClassifyTable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err       error
		permanent bool
	}{
		{kerr.UnknownTopicOrPartition, false},
		{kerr.UnknownTopicID, false},
		{kerr.TopicAuthorizationFailed, false},
		{kerr.InvalidTopicException, true},
		{kerr.InvalidRecord, true},
		{fmt.Errorf("wrapped: %w", kerr.MessageTooLarge), false},
		{kerr.LeaderNotAvailable, false},
		{kerr.NetworkException, false},
		{kgo.ErrRecordTimeout, false},
		{kgo.ErrRecordRetries, false},
		{kgo.ErrClientClosed, false},
		{context.DeadlineExceeded, false},
		{errors.New("connection reset by peer"), false},
	}
	for _, tc := range tests {
		t.Run(tc.err.Error(), func(t *testing.T) {
			got := kafkapub.Classify(tc.err)
			if !errors.Is(got, tc.err) {
				t.Fatalf("Classify(%v) = %v, lost the original error", tc.err, got)
			}
			if reliar.IsPermanent(got) != tc.permanent {
				t.Fatalf("IsPermanent(Classify(%v)) = %v, want %v", tc.err, !tc.permanent, tc.permanent)
			}
		})
	}
	if kafkapub.Classify(nil) != nil {
		t.Fatal("Classify(nil) != nil")
	}
}

// fastRetries makes franz-go retry and refresh metadata within
// milliseconds, instead of its production back-offs, so that fault tests
// are quick.
func fastRetries() []kgo.Opt {
	return []kgo.Opt{
		kgo.RetryBackoffFn(func(int) time.Duration { return 10 * time.Millisecond }),
		kgo.MetadataMinAge(10 * time.Millisecond),
	}
}
