// Package publishertest is the conformance suite every reliar.Publisher
// passes against a real broker. A publisher package calls [Run] from its own
// tests with a factory of fresh [Harness] values; the suite then proves the
// shared envelope mapping, the partition key, the durability acknowledgement,
// error classification, context handling, concurrency, batch results and an
// idempotent Close, skipping only what the harness's [Features] say the
// broker cannot show.
//
// A publisher's test wires each harness to a destination of its own:
//
//	func TestPublisherSuite(t *testing.T) {
//		publishertest.Run(t, func(t *testing.T) publishertest.Harness {
//			stream := createStream(t) // unique, removed in t.Cleanup
//			return publishertest.Harness{
//				Publisher: newPublisher(t, stream),
//				Receive:   newReader(stream).Receive,
//				Features:  publishertest.Features{Batch: true, DedupByID: true},
//			}
//		})
//	}
//
// Each harness decodes what it received with its package's consumer helper
// ([Harness.Decode]) and checks it with the protocol's reference library
// ([Harness.Reference], the CloudEvents SDK's binding for the protocol),
// which the suite runs on every message it inspects: the suite itself
// depends on no broker or SDK.
//
// Publisher tests can also use [Envelope], [Unkeyed], [Decode] and
// [Compare] on their own.
package publishertest

import (
	"context"
	"testing"
	"time"

	"github.com/reliar/reliar"
)

// Received is one message as the broker delivered it to the test consumer.
type Received struct {
	// Headers are the message's headers (or fields, or application
	// properties) as delivered, with the broker's transport-only headers
	// removed.
	Headers map[string]string
	// Payload is the message body as delivered.
	Payload []byte
	// Key is the partition or routing key the broker saw, when the broker
	// has one (see Features.KeyIsPartitionKey); empty otherwise.
	Key string
	// Message is the broker's own message as the test consumer got it (a
	// *kgo.Record, a *nats.Msg, an amqp091.Delivery, …), for
	// Harness.Decode and Harness.Reference.
	Message any
}

// Harness is one publisher under test wired to a fresh, isolated broker
// destination (its own stream, topic, queue or receiver) and a consumer of
// that destination. A factory registers its own cleanup with t.Cleanup and
// fails t loudly when the broker is unreachable; it must be safe to call
// from parallel subtests.
type Harness struct {
	// Publisher is the publisher under test. When Features.Batch is set it
	// must also implement reliar.BatchPublisher.
	Publisher reliar.Publisher

	// Receive returns the next n messages the broker delivered from the
	// harness's destination, in delivery order, each message once. When
	// ctx ends before n messages arrived, it returns those received so far
	// together with an error wrapping ctx.Err(). The suite uses that to
	// prove that nothing more than expected arrived.
	Receive func(ctx context.Context, n int) ([]Received, error)

	// Decode rebuilds the envelope of a received message with the
	// publisher package's consumer helper (its Envelope function). Nil
	// means reliar.EnvelopeFromHeaders(Headers, Payload).
	Decode func(r Received) (*reliar.SerializedEnvelope, error)

	// Reference, when set, checks a received message with the protocol's
	// reference implementation (the CloudEvents SDK's binding): it must
	// parse and validate the event and find every attribute of sent, and
	// the sent user headers outside the CloudEvents namespaces, with the
	// values sent. It returns what differs.
	Reference func(r Received, sent *reliar.SerializedEnvelope) error

	// Unroutable, when set, returns a publisher aimed at a destination
	// that does not exist (an unknown stream, topic or exchange; a
	// receiver answering 404). Every message shares that misconfiguration
	// and an operator can fix it, so Publish must fail with a transient
	// error: the rows wait and the circuit breaker opens, nothing goes
	// dead.
	Unroutable func(t *testing.T) reliar.Publisher

	// Misconfigured, when set, returns a publisher aimed at a destination
	// that does not exist yet, and fix, which creates it the way an
	// operator would. Publish must fail transiently before fix, and
	// succeed after it, the message then arriving through Receive.
	Misconfigured func(t *testing.T) (p reliar.Publisher, fix func())

	// TooLarge, when set, returns an envelope that fits the store's
	// limits but not the broker's announced or configured limit for one
	// message. Publish must fail permanently (that message alone can
	// never fit), and in a batch the other envelopes must still succeed.
	TooLarge func(t *testing.T) *reliar.SerializedEnvelope

	// Broken, when set, returns a publisher aimed at a broker that cannot
	// be reached (a closed port). Its Publish must fail with a transient
	// error, and must return by its context's deadline.
	Broken func(t *testing.T) reliar.Publisher

	// Refused, when set, returns an envelope that Publisher refuses while
	// it accepts every envelope built by [Envelope] (for example one routed
	// to a destination that does not exist). Its failure must be permanent,
	// or transient when Features.RefusedTransient is set. The suite uses it
	// to check a batch that mixes successes with one failure.
	Refused func(t *testing.T, seq int) *reliar.SerializedEnvelope

	// Features says what this broker can prove.
	Features Features
}

// Features lists what a broker can prove, so the suite runs only the
// checks that are meaningful for it.
type Features struct {
	// Batch: the publisher implements reliar.BatchPublisher.
	Batch bool
	// KeyIsPartitionKey: Received.Key carries the broker's partition or
	// routing key, which must equal SerializedEnvelope.PartitionKey() (the
	// ordering key, else the conversation id).
	KeyIsPartitionKey bool
	// DedupByID: the broker drops a second publish of the same message id
	// within its deduplication window, so publishing one envelope twice
	// delivers it once.
	DedupByID bool
	// RefusedTransient: Harness.Refused's envelope fails transiently rather
	// than permanently. Say why in Limitations.
	RefusedTransient bool
	// Limitations documents what the suite cannot prove against this
	// broker (for example: an in-process Kafka has no replication, so
	// acks=all is exercised but not its durability). The suite logs it.
	Limitations string
	// Timeout bounds every wait of the suite for the broker (one Receive,
	// one Publish). Defaults to 10s.
	Timeout time.Duration
	// Quiet is how long the suite waits to be sure no unexpected message
	// arrives (duplicates, refused messages). Defaults to 300ms.
	Quiet time.Duration
}

const (
	defaultTimeout = 10 * time.Second
	defaultQuiet   = 300 * time.Millisecond
)

func (f Features) timeout() time.Duration {
	if f.Timeout > 0 {
		return f.Timeout
	}
	return defaultTimeout
}

func (f Features) quiet() time.Duration {
	if f.Quiet > 0 {
		return f.Quiet
	}
	return defaultQuiet
}

// Run runs the conformance suite. Every subtest runs in parallel with the
// others and calls newHarness for a harness of its own.
func Run(t *testing.T, newHarness func(t *testing.T) Harness) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			if h.Publisher == nil || h.Receive == nil {
				t.Fatal("publishertest: the harness needs a Publisher and a Receive")
			}
			if h.Features.Limitations != "" && tc.name == cases[0].name {
				t.Logf("broker limitations: %s", h.Features.Limitations)
			}
			tc.run(t, h)
		})
	}
}

// testCase is one subtest of the suite.
type testCase struct {
	name string
	run  func(t *testing.T, h Harness)
}
