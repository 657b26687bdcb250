package natspub

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
		return fmt.Errorf("natspub: %w", &jetstream.APIError{Code: code, ErrorCode: 10000, Description: "x"})
	}
	tests := []struct {
		name string
		err  error
		want reliar.FailureKind
	}{
		{"cancelled", context.Canceled, reliar.FailureTransient},
		{"deadline", fmt.Errorf("wrapped: %w", context.DeadlineExceeded), reliar.FailureTransient},
		// Misconfigurations every message shares: transient.
		{"no stream", jetstream.ErrNoStreamResponse, reliar.FailureTransient},
		{"no responders", nats.ErrNoResponders, reliar.FailureTransient},
		{"stream not found", jetstream.ErrStreamNotFound, reliar.FailureTransient},
		{"permission violation", nats.ErrPermissionViolation, reliar.FailureTransient},
		{"authorization", nats.ErrAuthorization, reliar.FailureTransient},
		{"API 403", api(403), reliar.FailureTransient},
		{"max payload", nats.ErrMaxPayload, reliar.FailurePermanent},
		{"bad subject", nats.ErrBadSubject, reliar.FailurePermanent},
		{"message too large for the stream", jetstream.ErrStreamMessageExceedsMaximum, reliar.FailurePermanent},
		{"API 400", api(400), reliar.FailurePermanent},
		{"API 404", api(404), reliar.FailureTransient},
		{"API 408", api(408), reliar.FailureTransient},
		{"API 429", api(429), reliar.FailureTransient},
		{"API 500", api(500), reliar.FailureTransient},
		{"API 503", api(503), reliar.FailureTransient},
		{"JetStream not enabled", jetstream.ErrJetStreamNotEnabled, reliar.FailureTransient},
		{"timeout", nats.ErrTimeout, reliar.FailureTransient},
		{"connection closed", nats.ErrConnectionClosed, reliar.FailureTransient},
		{"async ack timeout", jetstream.ErrAsyncPublishTimeout, reliar.FailureTransient},
		{"stalled", jetstream.ErrTooManyStalledMsgs, reliar.FailureTransient},
		{"invalid ack", jetstream.ErrInvalidJSAck, reliar.FailureTransient},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := classify(tt.err)
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
