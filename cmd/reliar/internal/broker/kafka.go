package broker

import (
	"context"
	"fmt"
	"net"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/publisher/kafkapub"
)

// defaultKafkaTopic is the topic of every message when --topic is not given.
const defaultKafkaTopic = "reliar"

// parseKafka checks a kafka://host:port[,host:port...] URL and the topics.
func parseKafka(raw string, o Options) (func(ctx context.Context) (*Broker, error), error) {
	hosts := strings.TrimSuffix(strings.TrimPrefix(raw, "kafka://"), "/")
	if hosts == "" || strings.ContainsAny(hosts, "/?#@") {
		return nil, badURL(raw, "want kafka://host:port[,host:port...]")
	}
	var brokers []string
	for h := range strings.SplitSeq(hosts, ",") {
		if _, port, err := net.SplitHostPort(h); err != nil || port == "" {
			return nil, badURL(raw, "broker %q is not host:port", h)
		}
		brokers = append(brokers, h)
	}
	opts, err := kafkaTopics(o.Topics)
	if err != nil {
		return nil, err
	}
	routes := kafkaRoutesOf(o.Topics)
	return func(context.Context) (*Broker, error) { return openKafka(brokers, opts, routes) }, nil
}

// kafkaTopics turns --topic values into publisher options: one bare name,
// the default topic, and any number of type=name mappings.
func kafkaTopics(values []string) ([]kafkapub.Option, error) {
	var (
		byType map[string]string
		def    string
	)
	for _, v := range values {
		typ, topic, mapped := strings.Cut(v, "=")
		switch {
		case !mapped && def != "":
			return nil, fmt.Errorf("%w: --topic: two default topics, %q and %q (map a message type with type=topic)", ErrBadOption, def, v)
		case !mapped:
			def = v
		default:
			if byType == nil {
				byType = make(map[string]string)
			}
			if _, dup := byType[typ]; dup {
				return nil, fmt.Errorf("%w: --topic: message type %q mapped twice", ErrBadOption, typ)
			}
			byType[typ] = topic
		}
	}
	if def == "" && byType == nil {
		def = defaultKafkaTopic
	}
	var opts []kafkapub.Option
	if def != "" {
		opts = append(opts, kafkapub.WithDefaultTopic(def))
	}
	if byType != nil {
		opts = append(opts, kafkapub.WithTopics(byType))
	}
	return opts, nil
}

// openKafka builds a durable producing client (acks=all, idempotent) and
// its publisher. The client connects lazily; Check pings the cluster.
func openKafka(brokers []string, opts []kafkapub.Option, routes kafkaRoutes) (*Broker, error) {
	client, err := kafkapub.NewClient(brokers, kgo.ClientID("reliar-relay"))
	if err != nil {
		return nil, badOption(err)
	}
	pub, err := kafkapub.New(client, opts...)
	if err != nil {
		client.Close()
		return nil, badOption(err)
	}
	return &Broker{
		Publisher: pub,
		diagnose:  kafkaDiagnose(client, routes),
		dest:      func(env *reliar.SerializedEnvelope) string { return kafkaDestination(routes.topic(env.MessageType)) },
		check: func(ctx context.Context) error {
			if err := client.Ping(ctx); err != nil {
				return fmt.Errorf("kafkapub: %w", err)
			}
			return nil
		},
		close: func() error {
			client.Close()
			return nil
		},
	}, nil
}
