package kafka_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/publisher/kafka"
	"github.com/twmb/franz-go/pkg/kgo"
)

func TestNewValidatesOptions(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	client := newClient(t, c)
	topicFunc := kafka.WithTopicFunc(func(*reliar.SerializedEnvelope) string { return "t" })
	tests := []struct {
		name    string
		opts    []kafka.Option
		wantErr error
	}{
		{"default topic", []kafka.Option{kafka.WithDefaultTopic("orders")}, nil},
		{"topics", []kafka.Option{kafka.WithTopics(map[string]string{"a": "orders", "b": "payments.v1"})}, nil},
		{"topics and default", []kafka.Option{kafka.WithTopics(map[string]string{"a": "orders"}), kafka.WithDefaultTopic("rest")}, nil},
		{"topic func", []kafka.Option{topicFunc}, nil},
		{"nothing", nil, kafka.ErrInvalidOption},
		{"nil option", []kafka.Option{nil}, kafka.ErrInvalidOption},
		{"nil topic func", []kafka.Option{kafka.WithTopicFunc(nil)}, kafka.ErrInvalidOption},
		{"func and default", []kafka.Option{topicFunc, kafka.WithDefaultTopic("x")}, kafka.ErrInvalidOption},
		{"func and topics", []kafka.Option{kafka.WithTopics(map[string]string{"a": "x"}), topicFunc}, kafka.ErrInvalidOption},
		{"empty topics", []kafka.Option{kafka.WithTopics(map[string]string{})}, kafka.ErrInvalidOption},
		{"empty message type", []kafka.Option{kafka.WithTopics(map[string]string{"": "x"})}, kafka.ErrInvalidOption},
		{"bad mapped topic", []kafka.Option{kafka.WithTopics(map[string]string{"a": "bad/topic"})}, kafka.ErrInvalidTopic},
		{"empty default", []kafka.Option{kafka.WithDefaultTopic("")}, kafka.ErrInvalidTopic},
		{"dot", []kafka.Option{kafka.WithDefaultTopic(".")}, kafka.ErrInvalidTopic},
		{"dot dot", []kafka.Option{kafka.WithDefaultTopic("..")}, kafka.ErrInvalidTopic},
		{"too long", []kafka.Option{kafka.WithDefaultTopic(strings.Repeat("a", 250))}, kafka.ErrInvalidTopic},
		{"longest", []kafka.Option{kafka.WithDefaultTopic(strings.Repeat("a", 249))}, nil},
		{"unicode", []kafka.Option{kafka.WithDefaultTopic("tópico")}, kafka.ErrInvalidTopic},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := kafka.New(client, tc.opts...)
			if tc.wantErr == nil {
				if err != nil || p == nil {
					t.Fatalf("New = %v, %v; want a publisher", p, err)
				}
				return
			}
			if !errors.Is(err, tc.wantErr) || p != nil {
				t.Fatalf("New = %v, %v; want %v", p, err, tc.wantErr)
			}
		})
	}
}

func TestNewValidatesClient(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	seeds := kgo.SeedBrokers(c.ListenAddrs()...)
	tests := []struct {
		name string
		opts []kgo.Opt
		ok   bool
	}{
		{"franz-go defaults", nil, true},
		{"all acks", []kgo.Opt{kgo.RequiredAcks(kgo.AllISRAcks())}, true},
		{"leader ack", []kgo.Opt{kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite()}, false},
		{"no ack", []kgo.Opt{kgo.RequiredAcks(kgo.NoAck()), kgo.DisableIdempotentWrite()}, false},
		{"idempotence off", []kgo.Opt{kgo.DisableIdempotentWrite()}, false},
		{"transactional", []kgo.Opt{kgo.TransactionalID("tx")}, false},
		{"forced topic", []kgo.Opt{kgo.DefaultProduceTopic("x"), kgo.DefaultProduceTopicAlways()}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cl, err := kgo.NewClient(append([]kgo.Opt{seeds}, tc.opts...)...)
			if err != nil {
				t.Fatalf("kgo.NewClient: %v", err)
			}
			defer cl.Close()
			_, err = kafka.New(cl, kafka.WithDefaultTopic("t"))
			if tc.ok != (err == nil) {
				t.Fatalf("New = %v, want ok = %v", err, tc.ok)
			}
			if err != nil && !errors.Is(err, kafka.ErrInvalidClient) {
				t.Fatalf("New = %v, want ErrInvalidClient", err)
			}
		})
	}
	if _, err := kafka.New(nil, kafka.WithDefaultTopic("t")); !errors.Is(err, kafka.ErrInvalidClient) {
		t.Fatalf("New(nil) = %v, want ErrInvalidClient", err)
	}
}

func TestNewClient(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	tests := []struct {
		name    string
		brokers []string
		opts    []kgo.Opt
		wantErr error
	}{
		{"plain", c.ListenAddrs(), []kgo.Opt{kgo.ClientID("reliar-test")}, nil},
		{"no brokers", nil, nil, kafka.ErrInvalidClient},
		{"acks lowered", c.ListenAddrs(), []kgo.Opt{kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite()}, kafka.ErrInvalidClient},
		{"idempotence off", c.ListenAddrs(), []kgo.Opt{kgo.DisableIdempotentWrite()}, kafka.ErrInvalidClient},
		// franz-go itself refuses these.
		{"acks lowered, idempotent", c.ListenAddrs(), []kgo.Opt{kgo.RequiredAcks(kgo.LeaderAck())}, errFranzGo},
		{"bad option", c.ListenAddrs(), []kgo.Opt{kgo.ProducerBatchMaxBytes(1)}, errFranzGo},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cl, err := kafka.NewClient(tc.brokers, tc.opts...)
			if cl != nil {
				defer cl.Close()
			}
			switch {
			case tc.wantErr == errFranzGo:
				if err == nil || errors.Is(err, kafka.ErrInvalidClient) {
					t.Fatalf("NewClient = %v, want franz-go's configuration error", err)
				}
			case tc.wantErr != nil:
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("NewClient = %v, want %v", err, tc.wantErr)
				}
			case err != nil:
				t.Fatalf("NewClient: %v", err)
			default:
				if acks := cl.OptValue(kgo.RequiredAcks); acks != kgo.AllISRAcks() {
					t.Fatalf("acks = %v, want all", acks)
				}
			}
		})
	}
}

// errFranzGo stands for a configuration error that franz-go reports itself.
var errFranzGo = errors.New("franz-go configuration error")
