// Package kafkapub publishes outbox messages to Apache Kafka with franz-go.
//
// # Mapping
//
// Each envelope becomes one record as the CloudEvents Kafka protocol
// binding (binary content mode) says: the payload is the record value; every
// attribute of [reliar.CloudEventAttributes] is a "ce_" header (ce_id,
// ce_type, ce_source, ce_specversion, ce_time, the extensions
// ce_messageversion, ce_correlationid, …, ce_traceparent); the data content
// type is the "content-type" header; the W3C "traceparent" and "tracestate"
// headers and the user headers follow. The CloudEvents SDKs' Kafka bindings,
// Kafka Connect and Spring read such a record as a CloudEvent. A user header
// in a CloudEvents namespace, which only a row written by plain SQL can
// carry (Enqueue refuses it), is sent renamed ([reliar.RenamedHeader]).
// The envelope's partition key (its ordering key, else its conversation
// id; the binding's partitionkey) is the record key, so that the messages
// of one key land on one partition in order. The topic comes from
// [WithTopicFunc], or from a message type → topic map ([WithTopics]) with a
// fallback ([WithDefaultTopic]). The record timestamp is the produce time,
// so that topic retention counts from delivery, not from enqueue; the
// enqueue time travels in ce_time.
//
// Consumers read the id with [MessageID] and the envelope with [Envelope],
// which also read the "ce-" headers of pre-release versions.
//
// # Durability
//
// The host builds the *kgo.Client (or calls [NewClient]) with
// acks=all (kgo.RequiredAcks(kgo.AllISRAcks())) and the idempotent producer,
// which is franz-go's default; [New] refuses a client configured otherwise.
// A nil result of Publish means the partition leader appended the record and
// every in-sync replica acknowledged it: the record survives the loss of any
// broker but the last in-sync one. How many replicas that is depends on the
// topic's replication factor and min.insync.replicas (3 and 2 are the usual
// choice); with min.insync.replicas=1 an acknowledged record can still be
// lost with its leader.
//
// # Errors
//
// A condition of one message that no retry can fix is permanent
// ([reliar.Permanent]): a record over the topic's limit (below), a topic
// name that [WithTopicFunc] derived from the message and Kafka refuses, a
// record the broker finds invalid. A condition every message shares and an
// operator can fix is transient, so that it feeds the dispatcher's circuit
// breaker and dead-letters nothing: an unknown topic (create it and the
// backlog drains), a topic the client may not write to, refused
// credentials, a message type no topic mapping covers ([ErrNoTopic]).
// Everything else — timeouts, leader changes, lost connections, any
// retriable Kafka error, a cancelled context — is transient too.
//
// # Limits
//
// Before sending, each record is measured as the broker measures it: the
// size of a record batch holding it alone, uncompressed. When that exceeds
// the topic's max.message.bytes (read from the broker with DescribeConfigs
// and cached for a minute) or the client's kgo.ProducerBatchMaxBytes
// (1,000,012 bytes by default), the record fails permanently with
// [ErrTooLarge], naming both sizes. A MESSAGE_TOO_LARGE answer of the
// broker is then transient: franz-go batched records that each fit; keep
// ProducerBatchMaxBytes at or below the topics' max.message.bytes to avoid
// it. The store's MaxPayloadBytes (1 MiB by default) bounds the payload
// alone, while the batch also holds the key and the headers (about 1 KiB for
// a fully described envelope): with Kafka's defaults (max.message.bytes
// 1,048,588, ProducerBatchMaxBytes 1,000,012) a payload near 1 MiB does not
// fit. Lower MaxPayloadBytes to about 990,000 bytes, or raise both Kafka
// limits, so that everything Enqueue accepts can be published.
//
// # Duplicates
//
// The idempotent producer removes the duplicates of franz-go's own retries
// within one producer session. It cannot remove those of the outbox's
// retries: when the context of Publish ends after the produce request went
// out, Publish returns a transient error at once while the broker may still
// append the record, and the dispatcher publishes the row again later. This
// is the fourth duplicate window of the outbox (an ambiguous publish
// outcome); consumers deduplicate by the ce_id header ([MessageID]).
//
// # Tests
//
// The tests run against franz-go's in-process kfake cluster. kfake has no
// replication, so acks=all is exercised there against a single broker only:
// the tests prove the mapping, the results and the error classification, not
// the replication itself.
package kafkapub
