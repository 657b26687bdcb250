package otelobs

import (
	"strings"

	"go.opentelemetry.io/otel/propagation"
)

// Carriers let an OpenTelemetry propagator read and write the W3C trace
// context (traceparent, tracestate) in each broker's own message headers,
// so that a consumer continues the trace an outbox message carries:
//
//	ctx := propagation.TraceContext{}.Extract(ctx, otel.NATSCarrier(msg.Header))
//
// None of them imports a broker client: each is defined on the underlying
// type of the client's header structure, so a conversion or a pointer is
// all a consumer writes. HTTP needs none: propagation.HeaderCarrier reads
// an http.Header.

// NATSCarrier carries the trace context in a NATS message's headers
// (nats.Header, whose underlying type this is; convert with
// otel.NATSCarrier(msg.Header)). NATS header names are case-sensitive,
// which propagation.HeaderCarrier assumes they are not: Get finds a name
// as it is first, then in any case, and Set writes the lower-case names the
// publishers send.
type NATSCarrier map[string][]string

var _ propagation.TextMapCarrier = NATSCarrier(nil)

// Get returns the first value of key, matched exactly, else in any case.
func (c NATSCarrier) Get(key string) string {
	if vs := c[key]; len(vs) > 0 {
		return vs[0]
	}
	for k, vs := range c {
		if len(vs) > 0 && strings.EqualFold(k, key) {
			return vs[0]
		}
	}
	return ""
}

// Set replaces the values of key, under that exact name.
func (c NATSCarrier) Set(key, value string) {
	for k := range c {
		if k != key && strings.EqualFold(k, key) {
			delete(c, k)
		}
	}
	c[key] = []string{value}
}

// Keys lists the header names.
func (c NATSCarrier) Keys() []string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	return keys
}

// TableCarrier carries the trace context in a table of named values: an
// AMQP 0-9-1 header table (amqp091.Table, whose underlying type this is;
// otel.TableCarrier(delivery.Headers) for a consumer,
// otel.TableCarrier(publishing.Headers) to inject), or the fields of a
// Redis stream entry (redis.XMessage.Values). Get reads text values,
// strings or bytes, matching the name exactly, else in any case; Set writes
// a string.
type TableCarrier map[string]any

var _ propagation.TextMapCarrier = TableCarrier(nil)

// Get returns the text value of key, or "".
func (c TableCarrier) Get(key string) string {
	if v, ok := c[key]; ok {
		return text(v)
	}
	for k, v := range c {
		if strings.EqualFold(k, key) {
			return text(v)
		}
	}
	return ""
}

func text(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case []byte:
		return string(v)
	}
	return ""
}

// Set writes value under key.
func (c TableCarrier) Set(key, value string) { c[key] = value }

// Keys lists the names.
func (c TableCarrier) Keys() []string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	return keys
}

// KafkaHeader is the shape of a Kafka record header in the Go clients
// (franz-go's kgo.RecordHeader, segmentio/kafka-go's kafka.Header): a
// string key and a byte value.
type KafkaHeader interface {
	~struct {
		Key   string
		Value []byte
	}
}

// KafkaCarrier carries the trace context in a Kafka record's headers:
// otel.KafkaCarrier(&record.Headers) for a franz-go *kgo.Record. Of
// repeated headers Get reads the last, as Kafka's clients do, matching the
// name exactly, else in any case; Set replaces every header of that name
// by one.
func KafkaCarrier[H KafkaHeader](headers *[]H) propagation.TextMapCarrier {
	return kafkaCarrier[H]{headers}
}

type kafkaCarrier[H KafkaHeader] struct{ headers *[]H }

type kafkaHeader = struct {
	Key   string
	Value []byte
}

func (c kafkaCarrier[H]) Get(key string) string {
	hs := *c.headers
	for i := len(hs) - 1; i >= 0; i-- {
		if h := kafkaHeader(hs[i]); h.Key == key {
			return string(h.Value)
		}
	}
	for i := len(hs) - 1; i >= 0; i-- {
		if h := kafkaHeader(hs[i]); strings.EqualFold(h.Key, key) {
			return string(h.Value)
		}
	}
	return ""
}

func (c kafkaCarrier[H]) Set(key, value string) {
	kept := (*c.headers)[:0]
	for _, h := range *c.headers {
		if !strings.EqualFold(kafkaHeader(h).Key, key) {
			kept = append(kept, h)
		}
	}
	*c.headers = append(kept, H(kafkaHeader{Key: key, Value: []byte(value)}))
}

func (c kafkaCarrier[H]) Keys() []string {
	keys := make([]string, 0, len(*c.headers))
	for _, h := range *c.headers {
		keys = append(keys, kafkaHeader(h).Key)
	}
	return keys
}
