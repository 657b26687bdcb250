package amqppub_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	amqp091 "github.com/rabbitmq/amqp091-go"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/publisher/amqppub"
)

func TestNewValidatesOptions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		url  string
		opts []amqppub.Option
	}{
		{"nil option", brokerURL, []amqppub.Option{nil}},
		{"nil routing key func", brokerURL, []amqppub.Option{amqppub.WithRoutingKeyFunc(nil)}},
		{"long exchange", brokerURL, []amqppub.Option{amqppub.WithExchange(strings.Repeat("x", 256))}},
		{"pool size 0", brokerURL, []amqppub.Option{amqppub.WithPoolSize(0)}},
		{"dial timeout 0", brokerURL, []amqppub.Option{amqppub.WithDialTimeout(0)}},
		{"heartbeat under 1s", brokerURL, []amqppub.Option{amqppub.WithHeartbeat(time.Millisecond)}},
		{"backoff min 0", brokerURL, []amqppub.Option{amqppub.WithReconnectBackoff(0, time.Second)}},
		{"backoff max below min", brokerURL, []amqppub.Option{amqppub.WithReconnectBackoff(time.Second, time.Millisecond)}},
		{"nil logger", brokerURL, []amqppub.Option{amqppub.WithLogger(nil)}},
		{"bad url scheme", "http://127.0.0.1:5672/", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := amqppub.New(t.Context(), tc.url, tc.opts...)
			if !errors.Is(err, amqppub.ErrInvalidOption) || p != nil {
				t.Fatalf("New = %v, %v; want ErrInvalidOption", p, err)
			}
		})
	}
}

func TestNewAcceptsOptions(t *testing.T) {
	t.Parallel()
	top := newTopology(t, everything)
	p := newPublisher(t, brokerURL,
		amqppub.WithExchange(top.exchange),
		amqppub.WithPoolSize(2),
		amqppub.WithDialTimeout(5*time.Second),
		amqppub.WithHeartbeat(5*time.Second),
		amqppub.WithReconnectBackoff(50*time.Millisecond, time.Second),
	)
	if err := p.Publish(timeout(t), envelope(1, "orders.placed")); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	top.receive(t, 1)
}

func TestClassify(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err       error
		permanent bool
	}{
		// Shared by every message, fixed by an operator.
		{&amqp091.Error{Code: amqp091.NotFound, Reason: "NOT_FOUND - no exchange"}, false},
		{&amqp091.Error{Code: amqp091.AccessRefused, Reason: "ACCESS_REFUSED"}, false},
		{fmt.Errorf("wrapped: %w", &amqp091.Error{Code: amqp091.NotFound}), false},
		// Attributed message by message when the channel closes.
		{&amqp091.Error{Code: amqp091.PreconditionFailed, Reason: "PRECONDITION_FAILED - message size"}, false},
		{amqp091.ErrClosed, false},
		{&amqp091.Error{Code: amqp091.ConnectionForced, Reason: "CONNECTION_FORCED - shutdown"}, false},
		{&amqp091.Error{Code: amqp091.FrameError, Reason: "read: connection reset"}, false},
		{&amqp091.Error{Code: amqp091.ResourceError}, false},
		{amqppub.ErrNacked, false},
		{amqppub.ErrNotConnected, false},
		{errors.New("i/o timeout"), false},
	}
	for _, tc := range tests {
		t.Run(tc.err.Error(), func(t *testing.T) {
			got := amqppub.Classify(tc.err)
			if !errors.Is(got, tc.err) {
				t.Fatalf("Classify(%v) lost the original error", tc.err)
			}
			if reliar.IsPermanent(got) != tc.permanent {
				t.Fatalf("IsPermanent(Classify(%v)) = %v, want %v", tc.err, !tc.permanent, tc.permanent)
			}
		})
	}
	if amqppub.Classify(nil) != nil {
		t.Fatal("Classify(nil) != nil")
	}
}

func TestReturnError(t *testing.T) {
	t.Parallel()
	e := &amqppub.ReturnError{ReplyCode: amqp091.NoRoute, ReplyText: "NO_ROUTE", Exchange: "x", RoutingKey: "k"}
	if !errors.Is(e, amqppub.ErrUnroutable) || reliar.IsPermanent(e) {
		t.Fatalf("%v: want a transient ErrUnroutable", e)
	}
	if s := e.Error(); !strings.Contains(s, "NO_ROUTE") || !strings.Contains(s, `"x"`) || !strings.Contains(s, `"k"`) {
		t.Fatalf("Error() = %q, want the exchange, key and reply", s)
	}
}
