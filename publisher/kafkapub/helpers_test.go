package kafkapub_test

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/publisher/kafkapub"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const waitTimeout = 10 * time.Second

var topicSeq atomic.Int64

// uniqueTopic returns a topic name no other test uses.
func uniqueTopic(t *testing.T) string {
	return fmt.Sprintf("reliar-test-%d-%d", time.Now().UnixNano(), topicSeq.Add(1))
}

// newCluster starts an in-process Kafka cluster of one broker holding
// topics (three partitions each), closed when the test ends.
func newCluster(t testing.TB, topics ...string) *kfake.Cluster {
	t.Helper()
	opts := []kfake.Opt{kfake.NumBrokers(1)}
	if len(topics) > 0 {
		opts = append(opts, kfake.SeedTopics(3, topics...))
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		t.Fatalf("start kfake: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

// newClient builds a producing client for c with NewClient, closed when the
// test ends.
func newClient(t testing.TB, c *kfake.Cluster, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kafkapub.NewClient(c.ListenAddrs(), opts...)
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// newPublisher returns a publisher on a fresh client for c.
func newPublisher(t testing.TB, c *kfake.Cluster, clientOpts []kgo.Opt, opts ...kafkapub.Option) *kafkapub.Publisher {
	t.Helper()
	p, err := kafkapub.New(newClient(t, c, clientOpts...), opts...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p
}

// consume reads n records of topic from the start, with extra client
// options (credentials) if any, failing the test when they do not arrive in
// time. It returns them in the order received.
func consume(t *testing.T, c *kfake.Cluster, topic string, n int, opts ...kgo.Opt) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{
		kgo.SeedBrokers(c.ListenAddrs()...),
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
	}, opts...)...)
	if err != nil {
		t.Fatalf("consumer: %v", err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()
	var got []*kgo.Record
	for len(got) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of %d records of %s: %v", len(got), n, topic, ctx.Err())
		}
		for _, e := range fs.Errors() {
			t.Fatalf("consume %s: %v", topic, e.Err)
		}
		got = append(got, fs.Records()...)
	}
	return got
}

// envelope returns a message of type typ with every metadata field set.
func envelope(seq int, typ string) *reliar.SerializedEnvelope {
	id := reliar.NewMessageID()
	causation := uuid.New()
	sent := time.Now().UTC().Truncate(time.Microsecond)
	return &reliar.SerializedEnvelope{
		ID:             id,
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
			Trace:    reliar.Trace{Traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
			Routing:  reliar.Routing{Source: "kafka-test", ReplyTo: "replies"},
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

// headerMap turns record headers into a map.
func headerMap(r *kgo.Record) map[string]string {
	h := make(map[string]string, len(r.Headers))
	for _, x := range r.Headers {
		h[x.Key] = string(x.Value)
	}
	return h
}

// createTopic creates topic on c, three partitions, with configs.
func createTopic(t testing.TB, c *kfake.Cluster, topic string, configs map[string]string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		t.Fatalf("admin client: %v", err)
	}
	defer cl.Close()
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, 3, 1
	for k, v := range configs {
		c := kmsg.NewCreateTopicsRequestTopicConfig()
		c.Name, c.Value = k, kmsg.StringPtr(v)
		rt.Configs = append(rt.Configs, c)
	}
	req.Topics = append(req.Topics, rt)
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("create topic %s: %v", topic, err)
	}
	if err := kerr.ErrorForCode(resp.Topics[0].ErrorCode); err != nil {
		t.Fatalf("create topic %s: %v", topic, err)
	}
}
