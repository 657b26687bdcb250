// Package natspub publishes outbox messages to NATS JetStream.
//
// Each message is one JetStream publish on the subject "<prefix>.<message
// type>" (prefix "reliar" by default; [WithSubjectPrefix], or any mapping
// with [WithSubjectFunc]). The message follows the CloudEvents NATS protocol
// binding in binary content mode: the payload is the message data, every
// attribute a "ce-" header (ce-id, ce-type, ce-source, ce-specversion,
// ce-time, the extensions ce-messageversion, ce-correlationid, …), the data
// content type the "content-type" header (see reliar.CloudEventHeaders),
// and the CloudEvents SDKs' NATS and JetStream bindings read it as a
// CloudEvent. The W3C "traceparent" and "tracestate" headers, the user
// headers and Nats-Msg-Id = the message id follow. A user header in a
// CloudEvents namespace, which only a row written by plain SQL can carry
// (Enqueue refuses it), is sent renamed ([reliar.RenamedHeader]): the SDKs
// would refuse the whole event for it. User headers starting with "Nats-"
// are refused (a permanent failure): JetStream acts on them (Nats-Rollup
// can purge a stream), so they must not pass through unchecked.
//
// Consumers read the id with [MessageID] and the envelope with [Envelope],
// both over the nats.Header of a core or a JetStream message. NATS header
// names are case-sensitive: observability/otelobs's NATS carrier reads the
// trace context from them.
//
// # Durability and duplicates
//
// Publish returns only after the stream's publish acknowledgement: the
// message is stored with the stream's own replication and storage settings.
// PublishBatch sends every message asynchronously, then waits for every
// acknowledgement, one result per envelope.
//
// Delivery is at-least-once. An ambiguous publish outcome (duplicate window
// 4 of the dispatcher: the stream stored the message but the acknowledgement
// was lost or timed out) makes the dispatcher retry the row. JetStream
// drops a republish whose Nats-Msg-Id it has seen within the stream's
// duplicate window (Duplicates, 2 minutes by default) and acknowledges it
// as a duplicate, which this package treats as success. A retry that lands
// after the window is stored twice, so consumers still deduplicate by
// message id (ce-id). Set the stream's Duplicates to cover the retry delays
// that matter to you.
//
// # Failures
//
// A condition of one message that no retry can fix is permanent: over the
// server's max_payload or the stream's maximum message size, an invalid
// subject or header. A condition every message shares and an operator can
// fix is transient, so that it feeds the dispatcher's circuit breaker and
// dead-letters nothing: a subject no stream listens on ([ErrNoStream]: the
// rows wait, and drain once the stream is created), missing permissions,
// refused credentials. Timeouts, disconnections, a closed connection and
// server errors of the 5xx class ("JetStream temporarily unavailable",
// insufficient resources) are transient too, so a broker outage
// dead-letters nothing.
//
// # Limits
//
// The server announces max_payload (1 MiB by default), and it counts the
// header block with the data. Before sending, each message is measured the
// same way; one that exceeds it fails permanently with [ErrTooLarge], naming
// both sizes. The store's MaxPayloadBytes (1 MiB by default) bounds the
// payload alone, and the headers of a fully described envelope add about
// 1 KiB: on a server with the default max_payload, set MaxPayloadBytes to
// at most max_payload − 8 KiB, or raise max_payload, so that everything
// Enqueue accepts can be published. A stream's MaxMsgSize, when set,
// applies on top and is reported by the server (also permanent).
//
// # Partitioning
//
// NATS has no partition key. To spread ordered messages over partitions,
// put the partition key (SerializedEnvelope.PartitionKey: the ordering key,
// else the conversation id) into the subject with [WithSubjectFunc] and
// partition with a subject mapping on the server; the key also travels as
// ce-partitionkey when the message has an ordering key.
package natspub
