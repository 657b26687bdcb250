package natspub_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/cloudevents/sdk-go/protocol/nats_jetstream/v2"
	"github.com/cloudevents/sdk-go/v2/binding"
	"github.com/nats-io/nats.go"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/observability/otelobs"
	"github.com/reliar/reliar/publisher/internal/cetest"
	"github.com/reliar/reliar/publisher/publishertest"
)

// sdkReference reads a stored message with the CloudEvents SDK's NATS
// JetStream binding and compares the event with the envelope sent, and
// reads its trace context with OpenTelemetry's propagator through the
// NATS carrier we ship (NATS header names are case-sensitive).
func sdkReference(r publishertest.Received, sent *reliar.SerializedEnvelope) error {
	m, ok := r.Message.(*nats.Msg)
	if !ok {
		return fmt.Errorf("received a %T, not a *nats.Msg", r.Message)
	}
	ev, err := binding.ToEvent(context.Background(), nats_jetstream.NewMessage(m))
	if err != nil {
		return fmt.Errorf("the SDK's NATS JetStream binding: %w", err)
	}
	return errors.Join(cetest.Check(ev, sent, cetest.Options{}),
		cetest.CheckTrace(otelobs.NATSCarrier(m.Header), sent))
}
