package redispub_test

import (
	"fmt"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/observability/otelobs"
	"github.com/reliar/reliar/publisher/internal/cetest"
	"github.com/reliar/reliar/publisher/publishertest"
)

// traceReference reads an entry's trace context with OpenTelemetry's
// propagator through the table carrier we ship. CloudEvents has no Redis
// binding to check the rest with.
func traceReference(r publishertest.Received, sent *reliar.SerializedEnvelope) error {
	values, ok := r.Message.(map[string]any)
	if !ok {
		return fmt.Errorf("received a %T, not entry values", r.Message)
	}
	return cetest.CheckTrace(otelobs.TableCarrier(values), sent)
}
