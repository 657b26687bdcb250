// Package nats publishes outbox messages to NATS JetStream.
//
// Each message is one JetStream publish on the subject "<prefix>.<message
// type>" (prefix "reliar" by default; [WithSubjectPrefix], or any mapping
// with [WithSubjectFunc]). The payload is the message data; the envelope
// travels as CloudEvents binary-mode headers (see reliar.CloudEventHeaders)
// plus Nats-Msg-Id = the message id. User headers starting with "Nats-" are
// refused (a permanent failure): JetStream acts on them (Nats-Rollup can
// purge a stream), so they must not pass through unchecked.
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
// A subject no stream listens on is a configuration error and fails
// permanently (after the client's own short retries), unless
// [WithNoStreamTransient] says streams may appear later. A message the
// server refuses (over the stream's maximum message size or the server's
// maximum payload, an invalid subject or header) is permanent. Timeouts,
// disconnections, a closed connection and server errors of the 5xx class
// ("JetStream temporarily unavailable", insufficient resources) are
// transient, so a broker outage dead-letters nothing.
//
// # Partitioning
//
// NATS has no partition key. To spread ordered messages over partitions,
// put the partition key (SerializedEnvelope.PartitionKey: the ordering key,
// else the conversation id) into the subject with [WithSubjectFunc] and
// partition with a subject mapping on the server; the key also travels as
// ce-partitionkey when the message has an ordering key.
package nats
