package redispub

import (
	"fmt"
	"maps"
	"slices"

	"github.com/redis/go-redis/v9"
	"github.com/reliar/reliar"
)

// PayloadField is the stream entry field that holds the payload.
const PayloadField = "payload"

// args maps env to the XADD that publishes it.
func (p *Publisher) args(env *reliar.SerializedEnvelope) (*redis.XAddArgs, error) {
	stream := p.opts.streamFn(env)
	if stream == "" {
		return nil, ErrInvalidStream
	}
	if _, ok := env.Headers[PayloadField]; ok {
		return nil, ErrReservedField
	}
	h := reliar.CloudEventHeaders(env)
	values := make([]any, 0, 2*len(h)+2)
	for _, k := range slices.Sorted(maps.Keys(h)) {
		values = append(values, k, h[k])
	}
	values = append(values, PayloadField, env.Payload)
	return &redis.XAddArgs{
		Stream: stream,
		MaxLen: p.opts.maxLen,
		Approx: p.opts.maxLen > 0,
		ID:     "*",
		Values: values,
	}, nil
}

// Envelope rebuilds the envelope of a stream entry (redis.XMessage.Values),
// for consumers written in Go: the payload field is the payload, every
// other field a header named as in the CloudEvents HTTP and NATS bindings
// (ce- attributes, content-type), then reliar.EnvelopeFromHeaders
// applies. Its ID is what [MessageID] reads.
func Envelope(values map[string]any) (*reliar.SerializedEnvelope, error) {
	raw, ok := values[PayloadField]
	if !ok {
		return nil, ErrNoPayload
	}
	payload, err := fieldBytes(PayloadField, raw)
	if err != nil {
		return nil, err
	}
	h := make(map[string]string, len(values))
	for k, v := range values {
		if k == PayloadField {
			continue
		}
		b, err := fieldBytes(k, v)
		if err != nil {
			return nil, err
		}
		h[k] = string(b)
	}
	env, err := reliar.EnvelopeFromHeaders(h, payload)
	if err != nil {
		return nil, fmt.Errorf("redispub: decode: %w", err)
	}
	return env, nil
}

// fieldBytes returns a field value as bytes; go-redis returns strings,
// other clients may hand over bytes.
func fieldBytes(name string, v any) ([]byte, error) {
	switch v := v.(type) {
	case string:
		return []byte(v), nil
	case []byte:
		return v, nil
	}
	return nil, fmt.Errorf("redispub: decode: field %q is a %T, not a string", name, v)
}
