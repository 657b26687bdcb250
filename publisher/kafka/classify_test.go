package kafka_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/publisher/kafka"
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
		{"topic authorization", kerr.TopicAuthorizationFailed, true},
		{"message too large", kerr.MessageTooLarge, true},
		{"invalid record", kerr.InvalidRecord, true},
		{"record list too large", kerr.RecordListTooLarge, true},
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
			p := newPublisher(t, c, append(fastRetries(), kgo.RecordRetries(2)), kafka.DefaultTopic(topic))

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
	p := newPublisher(t, c, fastRetries(), kafka.DefaultTopic(topic))

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
	p := newPublisher(t, c, fastRetries(), kafka.DefaultTopic(topic))

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
	p := newPublisher(t, c, nil, kafka.DefaultTopic(topic))

	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()
	err := p.Publish(ctx, envelope(1, "orders.placed"))
	if !errors.Is(err, kerr.TopicAuthorizationFailed) || !reliar.IsPermanent(err) {
		t.Fatalf("Publish = %v, want a permanent TOPIC_AUTHORIZATION_FAILED", err)
	}
}

// TestUnknownTopicIsPermanent publishes to a topic the cluster does not
// have (kfake does not create topics on demand), twice: the second time
// franz-go paces its metadata refreshes, and the failure must still come
// well within a publish timeout.
func TestUnknownTopicIsPermanent(t *testing.T) {
	t.Parallel()
	c := newCluster(t, uniqueTopic(t))
	p := newPublisher(t, c, nil, kafka.DefaultTopic("missing-topic"))

	for i := range 2 {
		ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
		start := time.Now()
		err := p.Publish(ctx, envelope(i, "orders.placed"))
		cancel()
		if !errors.Is(err, kerr.UnknownTopicOrPartition) || !reliar.IsPermanent(err) {
			t.Fatalf("Publish %d = %v, want a permanent UNKNOWN_TOPIC_OR_PARTITION", i, err)
		}
		if !strings.Contains(err.Error(), "missing-topic") {
			t.Errorf("error %q does not name the topic", err)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("Publish %d took %v to report the unknown topic", i, d)
		}
	}
}

// TestRecordTooLargeForClient checks that franz-go's own size check, made
// before anything is sent, is permanent too.
func TestRecordTooLargeForClient(t *testing.T) {
	t.Parallel()
	topic := uniqueTopic(t)
	c := newCluster(t, topic)
	p := newPublisher(t, c, []kgo.Opt{kgo.ProducerBatchMaxBytes(1024)}, kafka.DefaultTopic(topic))

	env := envelope(1, "orders.placed")
	env.Payload = make([]byte, 4096)
	err := p.Publish(t.Context(), env)
	if !errors.Is(err, kerr.MessageTooLarge) || !reliar.IsPermanent(err) {
		t.Fatalf("Publish = %v, want a permanent MESSAGE_TOO_LARGE", err)
	}
}

// TestBrokerUnreachable points the publisher at a closed port: Publish
// must fail transiently by its deadline.
func TestBrokerUnreachable(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	addrs := c.ListenAddrs()
	c.Close()
	cl, err := kafka.NewClient(addrs)
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	defer cl.Close()
	p, err := kafka.New(cl, kafka.DefaultTopic("t"))
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
	p := newPublisher(t, c, nil, kafka.DefaultTopic(topic))

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
		{kerr.UnknownTopicOrPartition, true},
		{kerr.UnknownTopicID, true},
		{kerr.InvalidTopicException, true},
		{fmt.Errorf("wrapped: %w", kerr.MessageTooLarge), true},
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
			got := kafka.Classify(tc.err)
			if !errors.Is(got, tc.err) {
				t.Fatalf("Classify(%v) = %v, lost the original error", tc.err, got)
			}
			if reliar.IsPermanent(got) != tc.permanent {
				t.Fatalf("IsPermanent(Classify(%v)) = %v, want %v", tc.err, !tc.permanent, tc.permanent)
			}
		})
	}
	if kafka.Classify(nil) != nil {
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
