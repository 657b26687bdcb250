package nats

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/reliar/reliar"
)

func TestClassify(t *testing.T) {
	api := func(code int) error {
		return fmt.Errorf("nats: %w", &jetstream.APIError{Code: code, ErrorCode: 10000, Description: "x"})
	}
	tests := []struct {
		name              string
		err               error
		noStreamTransient bool
		want              reliar.FailureKind
	}{
		{"cancelled", context.Canceled, false, reliar.FailureTransient},
		{"deadline", fmt.Errorf("wrapped: %w", context.DeadlineExceeded), false, reliar.FailureTransient},
		{"no stream", jetstream.ErrNoStreamResponse, false, reliar.FailurePermanent},
		{"no responders", nats.ErrNoResponders, false, reliar.FailurePermanent},
		{"no stream, transient", jetstream.ErrNoStreamResponse, true, reliar.FailureTransient},
		{"max payload", nats.ErrMaxPayload, false, reliar.FailurePermanent},
		{"bad subject", nats.ErrBadSubject, false, reliar.FailurePermanent},
		{"message too large for the stream", jetstream.ErrStreamMessageExceedsMaximum, false, reliar.FailurePermanent},
		{"API 400", api(400), false, reliar.FailurePermanent},
		{"API 404", api(404), false, reliar.FailurePermanent},
		{"API 408", api(408), false, reliar.FailureTransient},
		{"API 429", api(429), false, reliar.FailureTransient},
		{"API 500", api(500), false, reliar.FailureTransient},
		{"API 503", api(503), false, reliar.FailureTransient},
		{"JetStream not enabled", jetstream.ErrJetStreamNotEnabled, false, reliar.FailureTransient},
		{"timeout", nats.ErrTimeout, false, reliar.FailureTransient},
		{"connection closed", nats.ErrConnectionClosed, false, reliar.FailureTransient},
		{"async ack timeout", jetstream.ErrAsyncPublishTimeout, false, reliar.FailureTransient},
		{"stalled", jetstream.ErrTooManyStalledMsgs, false, reliar.FailureTransient},
		{"invalid ack", jetstream.ErrInvalidJSAck, false, reliar.FailureTransient},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := classify(tt.err, tt.noStreamTransient)
			if k := reliar.KindOf(got); k != tt.want {
				t.Errorf("classify(%v) is %v, want %v", tt.err, k, tt.want)
			}
			if !errors.Is(got, tt.err) {
				t.Errorf("classify(%v) = %v hides the original error", tt.err, got)
			}
		})
	}
}

func TestDefaultSubjectPrefix(t *testing.T) {
	o, err := buildOptions(nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := o.subject(&reliar.SerializedEnvelope{MessageType: "orders.placed"}); got != "reliar.orders.placed" {
		t.Fatalf("default subject %q, want reliar.orders.placed", got)
	}
}
