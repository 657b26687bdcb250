package kafkapub

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/reliar/reliar"
	"github.com/twmb/franz-go/pkg/kgo"
)

// ErrInvalidClient is wrapped by the error [New] and [NewClient] return for
// a client that cannot publish durably.
var ErrInvalidClient = errors.New("kafkapub: client not configured for durable publishing")

// Publisher publishes outbox messages as Kafka records. It is safe for
// concurrent use. It does not own its client: the host closes the client
// after the dispatcher stopped.
type Publisher struct {
	client *kgo.Client
	opts   options
	limits *limits
}

var _ reliar.BatchPublisher = (*Publisher)(nil)

// New returns a publisher that produces through client. The client must
// require acks from all in-sync replicas, keep the idempotent producer, and
// be neither transactional nor forced to one topic; see [NewClient].
func New(client *kgo.Client, opts ...Option) (*Publisher, error) {
	if client == nil {
		return nil, fmt.Errorf("%w: client is nil", ErrInvalidClient)
	}
	if err := checkClient(client); err != nil {
		return nil, err
	}
	o, err := newOptions(opts)
	if err != nil {
		return nil, err
	}
	return &Publisher{client: client, opts: o, limits: &limits{client: client, topics: map[string]*topicLimit{}}}, nil
}

// NewClient builds a producing client for brokers with acks=all, the
// idempotent producer, no linger and one unknown-topic retry, then opts
// (SASL, TLS, client id, …). It fails when opts undo acks=all or
// idempotence, make the client transactional, or force a produce topic.
//
// One unknown-topic retry (kgo.UnknownTopicRetries(1)), because franz-go's
// default of 4 paces its later metadata refreshes by MetadataMinAge (5s):
// a publish to a missing topic would outlast the dispatcher's publish
// timeout. With one, it fails quickly and transiently, feeding the
// dispatcher's circuit breaker, and the rows wait until the topic exists.
//
// No linger, because every Publish waits for its record: franz-go's default
// 10ms linger would add 10ms to each one, while concurrent publishes are
// still batched into one request when they queue behind another. Pass
// kgo.ProducerLinger to choose otherwise.
func NewClient(brokers []string, opts ...kgo.Opt) (*kgo.Client, error) {
	if len(brokers) == 0 {
		return nil, fmt.Errorf("%w: no brokers", ErrInvalidClient)
	}
	all := append([]kgo.Opt{kgo.SeedBrokers(brokers...), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ProducerLinger(0), kgo.UnknownTopicRetries(1)}, opts...)
	client, err := kgo.NewClient(all...)
	if err != nil {
		return nil, fmt.Errorf("kafkapub: new client: %w", err)
	}
	if err := checkClient(client); err != nil {
		client.Close()
		return nil, err
	}
	return client, nil
}

// checkClient refuses a client whose configuration breaks durability or
// the topic mapping.
func checkClient(client *kgo.Client) error {
	if acks, _ := client.OptValue(kgo.RequiredAcks).(kgo.Acks); acks != kgo.AllISRAcks() {
		return fmt.Errorf("%w: RequiredAcks must be kgo.AllISRAcks()", ErrInvalidClient)
	}
	if off, _ := client.OptValue(kgo.DisableIdempotentWrite).(bool); off {
		return fmt.Errorf("%w: the idempotent producer is disabled", ErrInvalidClient)
	}
	if vs := client.OptValues(kgo.TransactionalID); len(vs) == 2 && vs[1] == true {
		return fmt.Errorf("%w: the client is transactional", ErrInvalidClient)
	}
	if always, _ := client.OptValue(kgo.DefaultProduceTopicAlways).(bool); always {
		return fmt.Errorf("%w: DefaultProduceTopicAlways overrides the topic mapping", ErrInvalidClient)
	}
	return nil
}

// Publish produces env as one record and waits for the broker's
// acknowledgement or the end of ctx, whichever comes first.
func (p *Publisher) Publish(ctx context.Context, env *reliar.SerializedEnvelope) error {
	rec, err := p.record(env)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("kafkapub: publish %s: %w", env.ID, err)
	}
	if err := p.checkSize(ctx, env, rec); err != nil {
		return err
	}
	done := make(chan error, 1)
	p.client.Produce(ctx, rec, func(_ *kgo.Record, err error) { done <- err })
	select {
	case err := <-done:
		return produceError(env, rec.Topic, err)
	case <-ctx.Done():
		select {
		case err := <-done:
			return produceError(env, rec.Topic, err)
		default:
			return fmt.Errorf("kafkapub: publish %s to %q: outcome unknown: %w", env.ID, rec.Topic, ctx.Err())
		}
	}
}

// produced is the outcome of one record of a batch.
type produced struct {
	index int
	err   error
}

// PublishBatch produces every envelope as a record, then waits for all the
// acknowledgements. It returns one result per envelope, in order; an
// envelope still unacknowledged when ctx ends gets ctx's error.
func (p *Publisher) PublishBatch(ctx context.Context, envs []*reliar.SerializedEnvelope) []error {
	results := make([]error, len(envs))
	topics := make([]string, len(envs))
	waiting := make([]bool, len(envs))
	done := make(chan produced, len(envs))
	pending := 0
	for i, env := range envs {
		rec, err := p.record(env)
		if err != nil {
			results[i] = err
			continue
		}
		if err := ctx.Err(); err != nil {
			results[i] = fmt.Errorf("kafkapub: publish %s: %w", env.ID, err)
			continue
		}
		if err := p.checkSize(ctx, env, rec); err != nil {
			results[i] = err
			continue
		}
		topics[i] = rec.Topic
		waiting[i] = true
		pending++
		p.client.Produce(ctx, rec, func(_ *kgo.Record, err error) { done <- produced{i, err} })
	}
	settle := func(r produced) {
		waiting[r.index] = false
		pending--
		results[r.index] = produceError(envs[r.index], topics[r.index], r.err)
	}
	for pending > 0 {
		select {
		case r := <-done:
			settle(r)
		case <-ctx.Done():
			// Keep the outcomes that already arrived; the rest are unknown.
			for len(done) > 0 {
				settle(<-done)
			}
			for i, w := range waiting {
				if w {
					results[i] = fmt.Errorf("kafkapub: publish %s to %q: outcome unknown: %w", envs[i].ID, topics[i], ctx.Err())
				}
			}
			return results
		}
	}
	return results
}

// record maps env to a Kafka record.
func (p *Publisher) record(env *reliar.SerializedEnvelope) (*kgo.Record, error) {
	if env == nil {
		return nil, reliar.Permanent(errors.New("kafkapub: nil envelope"))
	}
	topic, err := p.opts.topicFor(env)
	if err != nil {
		return nil, err
	}
	return &kgo.Record{
		Topic:   topic,
		Key:     []byte(env.PartitionKey()),
		Value:   env.Payload,
		Headers: headersOf(env),
	}, nil
}

// headersOf maps env to the headers of the CloudEvents Kafka binding
// in binary mode: each attribute as "ce_<name>", the data content type as
// "content-type", then the W3C trace headers and the user headers (sorted
// by name, renamed out of the CloudEvents namespaces).
func headersOf(env *reliar.SerializedEnvelope) []kgo.RecordHeader {
	headers := make([]kgo.RecordHeader, 0, len(env.Headers)+24)
	for name, v := range reliar.CloudEventAttributes(env) {
		headers = append(headers, kgo.RecordHeader{Key: headerName(name), Value: []byte(v)})
	}
	for k, v := range reliar.TraceHeaders(env) {
		headers = append(headers, kgo.RecordHeader{Key: k, Value: []byte(v)})
	}
	user := maps.Collect(reliar.UserHeaders(env))
	for _, k := range slices.Sorted(maps.Keys(user)) {
		headers = append(headers, kgo.RecordHeader{Key: k, Value: []byte(user[k])})
	}
	return headers
}

// headerName is the record header of a CloudEvents attribute (a bare name
// such as "id") in the Kafka binding: "content-type" for the data content
// type, "ce_" and the name for every other attribute.
func headerName(attribute string) string {
	if attribute == reliar.AttrDataContentType {
		return HeaderContentType
	}
	return HeaderPrefix + attribute
}

// The Kafka binding's names: the attribute prefix, and the data content
// type's header.
const (
	HeaderPrefix      = "ce_"
	HeaderContentType = "content-type"
)

// produceError wraps a produce error with the message id and topic, and
// classifies it.
func produceError(env *reliar.SerializedEnvelope, topic string, err error) error {
	if err == nil {
		return nil
	}
	return classify(fmt.Errorf("kafkapub: publish %s to %q: %w", env.ID, topic, err))
}
