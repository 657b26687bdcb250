package broker

import (
	"context"
	"fmt"

	"github.com/reliar/reliar"
)

// Problem is a destination that takes no message until an operator creates
// or fixes something on the broker: a JetStream stream for the subject, an
// exchange, a queue bound to it, a Kafka topic. Every publish to it fails
// transiently, so nothing goes dead meanwhile.
type Problem struct {
	// Destination names where the messages go, for example
	// `NATS subject "shop.order_placed"`. Problems of one destination
	// share it.
	Destination string
	// Missing says what is wrong, in a few words.
	Missing string
	// Fix says what the operator does about it.
	Fix string
	// recheck asks the broker whether the problem is gone; nil when the
	// broker cannot tell without a publish.
	recheck func(ctx context.Context) (bool, error)
}

// Error returns the problem in one line.
func (p *Problem) Error() string {
	return fmt.Sprintf("%s: %s; %s", p.Destination, p.Missing, p.Fix)
}

// Recheck asks the broker whether the problem is gone (for NATS with
// Options.CreateStream, after creating the stream). known is false when
// the broker cannot tell without a publish.
func (p *Problem) Recheck(ctx context.Context) (fixed, known bool, err error) {
	if p.recheck == nil {
		return false, false, nil
	}
	fixed, err = p.recheck(ctx)
	return fixed, err == nil, err
}

// Diagnose returns the destination problem a failed publish of env shows,
// or nil when err is not one (an outage, a message of its own that cannot
// go).
func (b *Broker) Diagnose(env *reliar.SerializedEnvelope, err error) *Problem {
	if b.diagnose == nil || err == nil {
		return nil
	}
	return b.diagnose(env, err)
}

// Destination names where env goes, as Problem.Destination does; "" for
// brokers with no destination problems to diagnose.
func (b *Broker) Destination(env *reliar.SerializedEnvelope) string {
	if b.dest == nil {
		return ""
	}
	return b.dest(env)
}

// Verdicts of a Finding.
const (
	FindingOK   = "ok"
	FindingWarn = "warn"
	FindingRed  = "red"
)

// Finding is one check of the broker's side of the set-up: a stream that
// captures the subjects, the exchange, the topics.
type Finding struct {
	// Name names the check: "nats stream", "amqp exchange", "kafka topics".
	Name string
	// Verdict is FindingOK, FindingWarn or FindingRed.
	Verdict string
	// Found says what was found, in one line.
	Found string
	// Why explains a warn or red verdict.
	Why string
	// Fix says what to do about it.
	Fix string
}

// Inspect connects to the broker on a connection of its own and checks
// what the relay needs there: for NATS a JetStream stream capturing
// "<prefix>.>", for RabbitMQ the exchange, for Kafka the topics the
// options name. Brokers with nothing to create (Redis, whose XADD creates
// the stream, and webhooks) return no finding. The error says the broker
// could not be asked.
func (l Location) Inspect(ctx context.Context) ([]Finding, error) {
	if l.inspect == nil {
		return nil, nil
	}
	return l.inspect(ctx)
}
