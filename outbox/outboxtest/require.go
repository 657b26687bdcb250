package outboxtest

import (
	"encoding/json"
	"mime"
	"strings"

	"github.com/reliar/reliar"
)

// RequireOpts narrows which messages of a type an assertion considers. Zero
// fields match anything; every field that is set must match.
type RequireOpts struct {
	// OrderingKey, when not empty, is the ordering key the message must
	// carry.
	OrderingKey string
	// TenantID, when not empty, is the tenant the message must belong to.
	TenantID string
	// Payload, when set, must report true for the message's payload bytes.
	// JSONBody builds one from a predicate on the decoded body.
	Payload func(payload []byte) bool
}

// matches reports whether e satisfies o; a nil o matches everything.
func (o *RequireOpts) matches(e *reliar.SerializedEnvelope) bool {
	if o == nil {
		return true
	}
	if o.OrderingKey != "" && e.OrderingKey != o.OrderingKey {
		return false
	}
	if o.TenantID != "" && e.Metadata.TenantID != o.TenantID {
		return false
	}
	return o.Payload == nil || o.Payload(e.Payload)
}

// JSONBody returns a payload predicate that decodes the payload as JSON into
// a T and reports pred of it; a payload that does not decode matches
// nothing.
func JSONBody[T any](pred func(body T) bool) func(payload []byte) bool {
	return func(payload []byte) bool {
		var body T
		if err := json.Unmarshal(payload, &body); err != nil {
			return false
		}
		return pred(body)
	}
}

// Expected is one message of RequireManyEnqueued's list: its type and, when
// Opts is not nil, what else it must match.
type Expected struct {
	// Type is the message type, as its body's MessageType returns it.
	Type string
	// Opts narrows the match; nil matches any message of Type.
	Opts *RequireOpts
}

// Enqueued is a message an assertion found.
type Enqueued[T reliar.Message] struct {
	// Envelope is the message as a publisher would receive it.
	Envelope reliar.SerializedEnvelope
	// Body is the payload decoded with encoding/json when its content type
	// is JSON (application/json or a +json type); otherwise the zero T, and
	// the payload is in Envelope.Payload.
	Body T
}

// typeOf returns the message type of T's zero value.
func typeOf[T reliar.Message]() string {
	var zero T
	return zero.MessageType()
}

// RequireEnqueued checks that exactly one message of T's type matching
// opts is among msgs, and returns it. It fails t, listing msgs, when none
// or several match, or when the one found does not decode into a T.
// The stores' test kits (pgstoretest, sqlitestoretest, mysqlstoretest) read
// msgs from a transaction; FakeEnqueuer.Enqueued returns what a fake
// recorded.
func RequireEnqueued[T reliar.Message](t TB, msgs []reliar.SerializedEnvelope, opts *RequireOpts) *Enqueued[T] {
	t.Helper()
	typ := typeOf[T]()
	var found []int
	for i := range msgs {
		if msgs[i].MessageType == typ && opts.matches(&msgs[i]) {
			found = append(found, i)
		}
	}
	switch len(found) {
	case 1:
	case 0:
		fail(t, "outboxtest: expected 1 message %s, found none\n%s", describeWant(typ, opts), describeAll(msgs))
		return nil
	default:
		fail(t, "outboxtest: expected 1 message %s, found %d (%s)\n%s", describeWant(typ, opts), len(found), positions(found), describeAll(msgs))
		return nil
	}
	e := &Enqueued[T]{Envelope: msgs[found[0]]}
	if isJSON(e.Envelope.ContentType) {
		if err := json.Unmarshal(e.Envelope.Payload, &e.Body); err != nil {
			fail(t, "outboxtest: message %s of type %s does not decode into %T: %v", e.Envelope.ID, typ, e.Body, err)
			return nil
		}
	}
	return e
}

// RequireNotEnqueued checks that no message of T's type matching opts is
// among msgs; a nil opts asserts that no message of the type is there at
// all. It fails t, listing the ones that match.
func RequireNotEnqueued[T reliar.Message](t TB, msgs []reliar.SerializedEnvelope, opts *RequireOpts) {
	t.Helper()
	typ := typeOf[T]()
	var found []int
	for i := range msgs {
		if msgs[i].MessageType == typ && opts.matches(&msgs[i]) {
			found = append(found, i)
		}
	}
	if len(found) > 0 {
		fail(t, "outboxtest: expected no message %s, found %d (%s)\n%s", describeWant(typ, opts), len(found), positions(found), describeAll(msgs))
	}
}

// RequireManyEnqueued checks that the messages of msgs whose types appear
// in expected are exactly the expected ones, in order (msgs are in enqueue
// order); messages of other types are ignored. It returns them, and fails
// t, listing msgs and naming the first difference, when they differ.
func RequireManyEnqueued(t TB, msgs []reliar.SerializedEnvelope, expected []Expected) []reliar.SerializedEnvelope {
	t.Helper()
	types := make(map[string]bool, len(expected))
	for _, x := range expected {
		types[x.Type] = true
	}
	var got []reliar.SerializedEnvelope
	var at []int
	for i := range msgs {
		if types[msgs[i].MessageType] {
			got = append(got, msgs[i])
			at = append(at, i)
		}
	}
	for i, x := range expected {
		if i >= len(got) {
			fail(t, "outboxtest: expected %d messages, found %d: message %d, %s, is missing\n%s", len(expected), len(got), i+1, describeWant(x.Type, x.Opts), describeAll(msgs))
			return nil
		}
		if got[i].MessageType != x.Type || !x.Opts.matches(&got[i]) {
			fail(t, "outboxtest: message %d of %d (#%d below) is not %s\n%s", i+1, len(expected), at[i]+1, describeWant(x.Type, x.Opts), describeAll(msgs))
			return nil
		}
	}
	if len(got) > len(expected) {
		fail(t, "outboxtest: expected %d messages, found %d: #%d below is one too many\n%s", len(expected), len(got), at[len(expected)]+1, describeAll(msgs))
		return nil
	}
	return got
}

// isJSON reports whether a content type is JSON.
func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}
