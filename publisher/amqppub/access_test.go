package amqppub_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	amqp091 "github.com/rabbitmq/amqp091-go"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/publisher/amqppub"
)

// TestRefusedLoginIsTransient connects to the real broker with a wrong
// password, an unknown user and a virtual host that does not exist: the
// broker refuses each (403 ACCESS_REFUSED, 530 NOT_ALLOWED), a
// condition every message shares and an operator fixes, so New must fail
// transiently. The broker's default user has every permission and AMQP
// cannot create users (the management plugin is not enabled), so a refused
// login is the credentials case tested here; TestAccessRefusedOnPublish
// covers ACCESS_REFUSED on a publish.
func TestRefusedLoginIsTransient(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, url string
		code      int
	}{
		{"wrong password", "amqp://guest:wrong-password@127.0.0.1:5672/", amqp091.AccessRefused},
		{"unknown user", "amqp://nobody:guest@127.0.0.1:5672/", amqp091.AccessRefused},
		{"unknown vhost", "amqp://guest:guest@127.0.0.1:5672/" + uniqueName("vhost"), amqp091.NotAllowed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, err := amqppub.New(timeout(t), tc.url, quiet)
			if err == nil {
				_ = p.Close()
				t.Fatal("New succeeded with refused credentials")
			}
			var ae *amqp091.Error
			if !errors.As(err, &ae) || ae.Code != tc.code {
				t.Errorf("New = %v, want reply code %d", err, tc.code)
			}
			if reliar.IsPermanent(err) {
				t.Fatalf("New = %v, a permanent failure; refused credentials must be transient", err)
			}
		})
	}

	// With the right credentials the same broker takes the message.
	top := newTopology(t, everything)
	p := newPublisher(t, brokerURL, amqppub.WithExchange(top.exchange))
	env := envelope(1, "orders.placed")
	if err := p.Publish(timeout(t), env); err != nil {
		t.Fatalf("Publish with the right credentials: %v", err)
	}
	if d := top.receive(t, 1)[0]; d.MessageId != env.ID.String() {
		t.Fatalf("received %s, want %s", d.MessageId, env.ID)
	}
}

// TestAccessRefusedOnPublish publishes to an exchange the broker refuses
// publishes to (an internal one, as an operator may declare by mistake):
// RabbitMQ closes the channel with 403 ACCESS_REFUSED, the reply code of a
// publish without write permission too. Every message to the exchange
// shares it and an operator fixes it, so it must be transient, for Publish
// and for each result of PublishBatch; once the operator declares the
// exchange as a public one, the same publisher delivers.
func TestAccessRefusedOnPublish(t *testing.T) {
	t.Parallel()
	top := newTopology(t, everything)
	// Redeclare the test's exchange as internal.
	if err := top.admin.ExchangeDelete(top.exchange, false, false); err != nil {
		t.Fatalf("delete exchange: %v", err)
	}
	if err := top.admin.ExchangeDeclare(top.exchange, amqp091.ExchangeTopic, true, false, true, false, nil); err != nil {
		t.Fatalf("declare internal exchange: %v", err)
	}
	p := newPublisher(t, brokerURL, amqppub.WithExchange(top.exchange), amqppub.WithPoolSize(1))

	refused := func(what string, err error) {
		t.Helper()
		var ae *amqp091.Error
		if !errors.As(err, &ae) || ae.Code != amqp091.AccessRefused {
			t.Fatalf("%s = %v, want 403 ACCESS_REFUSED", what, err)
		}
		if reliar.IsPermanent(err) {
			t.Fatalf("%s = %v, a permanent failure; ACCESS_REFUSED must be transient", what, err)
		}
	}
	refused("Publish", p.Publish(timeout(t), envelope(1, "orders.placed")))
	for i, err := range p.PublishBatch(timeout(t), batch(3, "orders.placed")) {
		refused(fmt.Sprintf("PublishBatch result %d", i), err)
	}
	top.expectNothing(t, 100*time.Millisecond)

	// The operator fixes the exchange.
	if err := top.admin.ExchangeDelete(top.exchange, false, false); err != nil {
		t.Fatalf("delete exchange: %v", err)
	}
	if err := top.admin.ExchangeDeclare(top.exchange, amqp091.ExchangeTopic, true, false, false, false, nil); err != nil {
		t.Fatalf("declare exchange: %v", err)
	}
	if err := top.admin.QueueBind(top.queue, "#", top.exchange, false, nil); err != nil {
		t.Fatalf("bind queue: %v", err)
	}
	env := envelope(2, "orders.placed")
	if err := p.Publish(timeout(t), env); err != nil {
		t.Fatalf("Publish after the fix: %v", err)
	}
	if d := top.receive(t, 1)[0]; d.MessageId != env.ID.String() {
		t.Fatalf("received %s, want %s", d.MessageId, env.ID)
	}
}
