package kafkapub_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/publisher/kafkapub"
	"github.com/twmb/franz-go/pkg/kgo"
)

func TestNewValidatesOptions(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	client := newClient(t, c)
	topicFunc := kafkapub.WithTopicFunc(func(*reliar.SerializedEnvelope) string { return "t" })
	tests := []struct {
		name    string
		opts    []kafkapub.Option
		wantErr error
	}{
		{"default topic", []kafkapub.Option{kafkapub.WithDefaultTopic("orders")}, nil},
		{"topics", []kafkapub.Option{kafkapub.WithTopics(map[string]string{"a": "orders", "b": "payments.v1"})}, nil},
		{"topics and default", []kafkapub.Option{kafkapub.WithTopics(map[string]string{"a": "orders"}), kafkapub.WithDefaultTopic("rest")}, nil},
		{"topic func", []kafkapub.Option{topicFunc}, nil},
		{"nothing", nil, kafkapub.ErrInvalidOption},
		{"nil option", []kafkapub.Option{nil}, kafkapub.ErrInvalidOption},
		{"nil topic func", []kafkapub.Option{kafkapub.WithTopicFunc(nil)}, kafkapub.ErrInvalidOption},
		{"func and default", []kafkapub.Option{topicFunc, kafkapub.WithDefaultTopic("x")}, kafkapub.ErrInvalidOption},
		{"func and topics", []kafkapub.Option{kafkapub.WithTopics(map[string]string{"a": "x"}), topicFunc}, kafkapub.ErrInvalidOption},
		{"empty topics", []kafkapub.Option{kafkapub.WithTopics(map[string]string{})}, kafkapub.ErrInvalidOption},
		{"empty message type", []kafkapub.Option{kafkapub.WithTopics(map[string]string{"": "x"})}, kafkapub.ErrInvalidOption},
		{"bad mapped topic", []kafkapub.Option{kafkapub.WithTopics(map[string]string{"a": "bad/topic"})}, kafkapub.ErrInvalidTopic},
		{"empty default", []kafkapub.Option{kafkapub.WithDefaultTopic("")}, kafkapub.ErrInvalidTopic},
		{"dot", []kafkapub.Option{kafkapub.WithDefaultTopic(".")}, kafkapub.ErrInvalidTopic},
		{"dot dot", []kafkapub.Option{kafkapub.WithDefaultTopic("..")}, kafkapub.ErrInvalidTopic},
		{"too long", []kafkapub.Option{kafkapub.WithDefaultTopic(strings.Repeat("a", 250))}, kafkapub.ErrInvalidTopic},
		{"longest", []kafkapub.Option{kafkapub.WithDefaultTopic(strings.Repeat("a", 249))}, nil},
		{"unicode", []kafkapub.Option{kafkapub.WithDefaultTopic("tópico")}, kafkapub.ErrInvalidTopic},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := kafkapub.New(client, tc.opts...)
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
			_, err = kafkapub.New(cl, kafkapub.WithDefaultTopic("t"))
			if tc.ok != (err == nil) {
				t.Fatalf("New = %v, want ok = %v", err, tc.ok)
			}
			if err != nil && !errors.Is(err, kafkapub.ErrInvalidClient) {
				t.Fatalf("New = %v, want ErrInvalidClient", err)
			}
		})
	}
	if _, err := kafkapub.New(nil, kafkapub.WithDefaultTopic("t")); !errors.Is(err, kafkapub.ErrInvalidClient) {
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
		{"no brokers", nil, nil, kafkapub.ErrInvalidClient},
		{"acks lowered", c.ListenAddrs(), []kgo.Opt{kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite()}, kafkapub.ErrInvalidClient},
		{"idempotence off", c.ListenAddrs(), []kgo.Opt{kgo.DisableIdempotentWrite()}, kafkapub.ErrInvalidClient},
		// franz-go itself refuses these.
		{"acks lowered, idempotent", c.ListenAddrs(), []kgo.Opt{kgo.RequiredAcks(kgo.LeaderAck())}, errFranzGo},
		{"bad option", c.ListenAddrs(), []kgo.Opt{kgo.ProducerBatchMaxBytes(1)}, errFranzGo},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cl, err := kafkapub.NewClient(tc.brokers, tc.opts...)
			if cl != nil {
				defer cl.Close()
			}
			switch {
			case tc.wantErr == errFranzGo:
				if err == nil || errors.Is(err, kafkapub.ErrInvalidClient) {
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
