package broker

import (
	"context"
	"errors"
	"fmt"
	"time"

	amqp091 "github.com/rabbitmq/amqp091-go"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/publisher/amqppub"
)

// amqpExchange returns the exchange the --exchange value names; "" is the
// broker's default exchange.
func amqpExchange(flag string) string {
	switch flag {
	case "":
		return amqppub.DefaultExchange
	case amqpDefaultExchangeFlag:
		return ""
	}
	return flag
}

// amqpExchangeFix says how to declare an exchange.
func amqpExchangeFix(exchange string) string {
	return fmt.Sprintf(`declare the exchange (rabbitmqadmin declare exchange name=%s type=topic durable=true) and bind the consumers' queues to it, or name another with --exchange`, exchange)
}

// amqpDestination names an exchange as a destination.
func amqpDestination(exchange string) string { return fmt.Sprintf("AMQP exchange %q", exchange) }

// amqpDiagnose returns the diagnosis of the AMQP publisher's errors: the
// exchange does not exist, or it routes the message to no queue.
func amqpDiagnose(url, exchange string) func(*reliar.SerializedEnvelope, error) *Problem {
	return func(_ *reliar.SerializedEnvelope, err error) *Problem {
		var ae *amqp091.Error
		var re *amqppub.ReturnError
		switch {
		case errors.As(err, &re):
			// The routing key names no binding: only a publish can tell
			// whether a binding was added since.
			return &Problem{
				Destination: amqpDestination(re.Exchange),
				Missing:     fmt.Sprintf("it routes routing key %q to no queue", re.RoutingKey),
				Fix:         "bind a queue to the exchange for that routing key (or give the exchange an alternate exchange), or change --routing-key",
			}
		case errors.As(err, &ae) && ae.Code == amqp091.NotFound:
			return &Problem{
				Destination: amqpDestination(exchange),
				Missing:     "the exchange does not exist",
				Fix:         amqpExchangeFix(exchange),
				recheck: func(ctx context.Context) (bool, error) {
					missing, err := amqpExchangeMissing(ctx, url, exchange)
					return err == nil && !missing, err
				},
			}
		}
		return nil
	}
}

// amqpExchangeMissing declares the exchange passively on a connection of
// its own: true when the broker answers NOT_FOUND.
func amqpExchangeMissing(ctx context.Context, url, exchange string) (bool, error) {
	if exchange == "" {
		return false, nil
	}
	timeout := amqpProbeTimeout
	if d, ok := ctx.Deadline(); ok {
		timeout = max(time.Until(d), time.Millisecond)
	}
	conn, err := amqp091.DialConfig(url, amqp091.Config{
		Dial:       amqp091.DefaultDial(timeout),
		Properties: amqp091.Table{"connection_name": "reliar inspect"},
	})
	if err != nil {
		return false, fmt.Errorf("amqppub: connect: %w", err)
	}
	defer func() { _ = conn.Close() }()
	ch, err := conn.Channel()
	if err != nil {
		return false, fmt.Errorf("amqppub: channel: %w", err)
	}
	err = ch.ExchangeDeclarePassive(exchange, amqp091.ExchangeTopic, true, false, false, false, nil)
	var ae *amqp091.Error
	switch {
	case err == nil:
		_ = ch.Close()
		return false, nil
	case errors.As(err, &ae) && ae.Code == amqp091.NotFound:
		return true, nil
	}
	return false, fmt.Errorf("amqppub: exchange %q: %w", exchange, err)
}

// inspectAMQP checks, on a connection of its own, that the exchange
// exists. Which queues it routes to, AMQP does not say.
func inspectAMQP(raw string, o Options) func(ctx context.Context) ([]Finding, error) {
	exchange := amqpExchange(o.Exchange)
	return func(ctx context.Context) ([]Finding, error) {
		f := Finding{Name: "amqp exchange"}
		if exchange == "" {
			f.Verdict, f.Found = FindingOK, "the broker's default exchange, which routes to the queue named by the routing key"
			return []Finding{f}, nil
		}
		missing, err := amqpExchangeMissing(ctx, raw, exchange)
		if err != nil {
			return nil, err
		}
		if missing {
			f.Verdict = FindingRed
			f.Found = fmt.Sprintf("no exchange %q", exchange)
			f.Why = "the relay cannot publish: it waits for the exchange at start-up, and every publish fails while it is missing"
			f.Fix = amqpExchangeFix(exchange)
		} else {
			f.Verdict = FindingOK
			f.Found = fmt.Sprintf("exchange %q exists (its bindings are not checked: a message it routes nowhere is retried, never lost)", exchange)
		}
		return []Finding{f}, nil
	}
}
