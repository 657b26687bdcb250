package kafkapub_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/IBM/sarama"
	"github.com/cloudevents/sdk-go/protocol/kafka_sarama/v2"
	"github.com/cloudevents/sdk-go/v2/binding"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/observability/otelobs"
	"github.com/reliar/reliar/publisher/internal/cetest"
	"github.com/reliar/reliar/publisher/publishertest"
	"github.com/twmb/franz-go/pkg/kgo"
)

// sdkReference reads a consumed record with the CloudEvents SDK's Kafka
// binding (the record becomes the sarama consumer message the binding
// reads, and the binding decodes it), and its trace context with
// OpenTelemetry's propagator through the Kafka carrier we ship.
func sdkReference(r publishertest.Received, sent *reliar.SerializedEnvelope) error {
	rec, ok := r.Message.(*kgo.Record)
	if !ok {
		return fmt.Errorf("received a %T, not a *kgo.Record", r.Message)
	}
	cm := &sarama.ConsumerMessage{
		Key: rec.Key, Value: rec.Value, Topic: rec.Topic, Partition: rec.Partition,
		Offset: rec.Offset, Timestamp: rec.Timestamp,
	}
	for _, h := range rec.Headers {
		cm.Headers = append(cm.Headers, &sarama.RecordHeader{Key: []byte(h.Key), Value: h.Value})
	}
	msg := kafka_sarama.NewMessageFromConsumerMessage(cm)
	ev, err := binding.ToEvent(context.Background(), msg)
	if err != nil {
		return fmt.Errorf("the SDK's Kafka binding: %w", err)
	}
	return errors.Join(
		cetest.Check(ev, sent, cetest.Options{Extra: []string{"kafkaoffset", "kafkapartition", "kafkatopic"}}),
		cetest.CheckTrace(otelobs.KafkaCarrier(&rec.Headers), sent))
}
