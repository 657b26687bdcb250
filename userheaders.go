package reliar

import (
	"errors"
	"iter"
	"strings"
)

// ErrReservedHeader is wrapped by the error of an Enqueue whose message has
// a user header in a CloudEvents binding's namespace (see
// [IsReservedHeader]): a standard consumer would read it as a CloudEvents
// attribute, and drop the whole event when the name is not a valid one.
var ErrReservedHeader = errors.New("reliar: user header in a CloudEvents namespace (ce-, ce_, cloudEvents:)")

// The namespaces of the CloudEvents bindings' attribute names: "ce-" for
// HTTP and NATS, "ce_" for Kafka, "cloudEvents:" for AMQP.
var reservedPrefixes = [...]string{"ce-", "ce_", "cloudevents:"}

// IsReservedHeader reports whether a user header name lies in a CloudEvents
// binding's namespace: it starts with "ce-", "ce_" or "cloudEvents:", in
// any case. [Outgoing.Prepared], and so every store's Enqueue, refuses such
// a header.
func IsReservedHeader(name string) bool {
	for _, p := range reservedPrefixes {
		if len(name) >= len(p) && strings.EqualFold(name[:len(p)], p) {
			return true
		}
	}
	return false
}

// RenamedHeader is the name under which a publisher sends a user header in
// a CloudEvents namespace, which only a row written without Enqueue (by
// plain SQL) can carry: "x-" before the name, and every ':' turned into
// '-', so that the name is valid in every protocol. "ce-my-ext" is sent as
// "x-ce-my-ext", "cloudEvents:foo" as "x-cloudEvents-foo". Other names
// come back unchanged.
func RenamedHeader(name string) string {
	if !IsReservedHeader(name) {
		return name
	}
	return "x-" + strings.ReplaceAll(name, ":", "-")
}

// UserHeaders yields the user headers of an envelope as every publisher
// sends them: a header in a CloudEvents namespace renamed with
// [RenamedHeader] (dropped when the envelope also has a header of that new
// name), and a header named like the envelope's own content type or trace
// context (content-type, traceparent, tracestate) left out, since the
// envelope's own values win. The rest come as they are, in no particular
// order.
func UserHeaders(e *SerializedEnvelope) iter.Seq2[string, string] {
	return func(yield func(name, value string) bool) {
		for k, v := range e.Headers {
			switch {
			case k == HeaderContentType && e.ContentType != "",
				k == HeaderTraceparent && e.Metadata.Trace.Traceparent != "",
				k == HeaderTracestate && e.Metadata.Trace.Tracestate != "":
				continue
			case IsReservedHeader(k):
				renamed := RenamedHeader(k)
				if _, taken := e.Headers[renamed]; taken {
					continue
				}
				k = renamed
			}
			if !yield(k, v) {
				return
			}
		}
	}
}
