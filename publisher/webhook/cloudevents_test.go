package webhook_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"

	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"

	"github.com/cloudevents/sdk-go/v2/binding"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/publisher/internal/cetest"
	"github.com/reliar/reliar/publisher/publishertest"
	"go.opentelemetry.io/otel/propagation"
)

// sdkReference reads a received request with the CloudEvents SDK's HTTP
// binding. The Go SDK returns header values as they were on the wire, so
// the comparison applies the binding's receive rule (one round of
// percent-decoding) itself, and also checks that every ce- header is
// printable ASCII, as the binding requires of a sender.
func sdkReference(r publishertest.Received, sent *reliar.SerializedEnvelope) error {
	m, ok := r.Message.(*request)
	if !ok {
		return fmt.Errorf("received a %T, not a request", r.Message)
	}
	for k, vs := range m.header {
		if len(k) < 3 || !bytes.EqualFold([]byte(k[:3]), []byte("ce-")) {
			continue
		}
		for _, v := range vs {
			for i := range len(v) {
				if c := v[i]; c < 0x21 || c > 0x7e {
					return fmt.Errorf("header %s holds the byte %#x: not percent-encoded", k, c)
				}
			}
		}
	}
	msg := cehttp.NewMessage(m.header, io.NopCloser(bytes.NewReader(m.body)))
	ev, err := binding.ToEvent(context.Background(), msg)
	if err != nil {
		return fmt.Errorf("the SDK's HTTP binding: %w", err)
	}
	return errors.Join(cetest.Check(ev, sent, cetest.Options{Decode: url.PathUnescape}),
		cetest.CheckTrace(propagation.HeaderCarrier(m.header), sent))
}
