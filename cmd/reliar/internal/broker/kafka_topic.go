package broker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/reliar/reliar"
)

// kafkaRoutes is where --topic sends each message type: byType, else def
// (empty when only mappings were given).
type kafkaRoutes struct {
	def    string
	byType map[string]string
}

// kafkaRoutesOf reads --topic values already checked by kafkaTopics.
func kafkaRoutesOf(values []string) kafkaRoutes {
	r := kafkaRoutes{byType: map[string]string{}}
	for _, v := range values {
		if typ, topic, mapped := strings.Cut(v, "="); mapped {
			r.byType[typ] = topic
		} else {
			r.def = v
		}
	}
	if len(values) == 0 {
		r.def = defaultKafkaTopic
	}
	return r
}

// topic returns the topic of a message type.
func (r kafkaRoutes) topic(messageType string) string {
	if t, ok := r.byType[messageType]; ok {
		return t
	}
	return r.def
}

// all returns every topic named, sorted.
func (r kafkaRoutes) all() []string {
	var out []string
	if r.def != "" {
		out = append(out, r.def)
	}
	for _, t := range r.byType {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return out
}

// kafkaTopicFix says how to create topics.
func kafkaTopicFix(topics []string) string {
	return fmt.Sprintf("create the topic (kafka-topics.sh --create --topic %s), or point --topic at an existing one", strings.Join(topics, ","))
}

// missingTopics returns those of topics the cluster does not have.
func missingTopics(ctx context.Context, client *kgo.Client, topics []string) ([]string, error) {
	req := kmsg.NewPtrMetadataRequest()
	req.AllowAutoTopicCreation = false // asking must not create them
	for _, t := range topics {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(t)
		req.Topics = append(req.Topics, rt)
	}
	resp, err := req.RequestWith(ctx, client)
	if err != nil {
		return nil, fmt.Errorf("kafkapub: metadata: %w", err)
	}
	var missing []string
	for _, t := range resp.Topics {
		name := ""
		if t.Topic != nil {
			name = *t.Topic
		}
		switch err := kerr.ErrorForCode(t.ErrorCode); {
		case err == nil:
		case errors.Is(err, kerr.UnknownTopicOrPartition):
			missing = append(missing, name)
		default:
			return nil, fmt.Errorf("kafkapub: metadata of topic %q: %w", name, err)
		}
	}
	return missing, nil
}

// kafkaDestination names a topic as a destination.
func kafkaDestination(topic string) string { return fmt.Sprintf("Kafka topic %q", topic) }

// kafkaDiagnose returns the diagnosis of the Kafka publisher's errors: the
// message's topic does not exist.
func kafkaDiagnose(client *kgo.Client, routes kafkaRoutes) func(*reliar.SerializedEnvelope, error) *Problem {
	return func(env *reliar.SerializedEnvelope, err error) *Problem {
		if !errors.Is(err, kerr.UnknownTopicOrPartition) {
			return nil
		}
		topic := routes.topic(env.MessageType)
		return &Problem{
			Destination: kafkaDestination(topic),
			Missing:     "the cluster has no such topic",
			Fix:         kafkaTopicFix([]string{topic}),
			recheck: func(ctx context.Context) (bool, error) {
				missing, err := missingTopics(ctx, client, []string{topic})
				return err == nil && len(missing) == 0, err
			},
		}
	}
}

// inspectKafka checks, on a client of its own, that the topics --topic
// names exist.
func inspectKafka(raw string, o Options) func(ctx context.Context) ([]Finding, error) {
	routes := kafkaRoutesOf(o.Topics)
	brokers := strings.Split(strings.TrimSuffix(strings.TrimPrefix(raw, "kafka://"), "/"), ",")
	return func(ctx context.Context) ([]Finding, error) {
		client, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ClientID("reliar-inspect"))
		if err != nil {
			return nil, badOption(err)
		}
		defer client.Close()
		topics := routes.all()
		missing, err := missingTopics(ctx, client, topics)
		if err != nil {
			return nil, err
		}
		f := Finding{Name: "kafka topics"}
		if len(missing) == 0 {
			f.Verdict, f.Found = FindingOK, fmt.Sprintf("topics %s exist", strings.Join(topics, ", "))
		} else {
			f.Verdict = FindingRed
			f.Found = fmt.Sprintf("missing topics: %s (of %s)", strings.Join(missing, ", "), strings.Join(topics, ", "))
			f.Why = "messages for a missing topic are not delivered: they wait and are retried, and /readyz answers 503 while they are all the relay has"
			f.Fix = kafkaTopicFix(missing)
		}
		return []Finding{f}, nil
	}
}
