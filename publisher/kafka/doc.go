// Package kafka publishes outbox messages to Apache Kafka with franz-go.
//
// # Mapping
//
// Each envelope becomes one record: the payload is the record value, the
// envelope's partition key (its ordering key, else its conversation id) is
// the record key, so that the messages of one key land on one partition in
// order, and the CloudEvents binary-mode headers of
// [reliar.CloudEventHeaders] are the record headers. The topic comes from
// [TopicFunc], or from a message type → topic map ([Topics]) with a fallback
// ([DefaultTopic]). The record timestamp is the produce time, so that topic
// retention counts from delivery, not from enqueue; the enqueue time travels
// in the ce-time header.
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
// An unknown topic, a topic the client may not write to, a record over the
// broker's size limit, an invalid record or topic name, and a message type
// with no topic are permanent ([reliar.Permanent]): retrying fails the same
// way. Everything else — timeouts, leader changes, lost connections, any
// retriable Kafka error, a cancelled context — is transient.
//
// # Duplicates
//
// The idempotent producer removes the duplicates of franz-go's own retries
// within one producer session. It cannot remove those of the outbox's
// retries: when the context of Publish ends after the produce request went
// out, Publish returns a transient error at once while the broker may still
// append the record, and the dispatcher publishes the row again later. This
// is the fourth duplicate window of the outbox (an ambiguous publish
// outcome); consumers deduplicate by the ce-id header.
//
// # Tests
//
// The tests run against franz-go's in-process kfake cluster. kfake has no
// replication, so acks=all is exercised there against a single broker only:
// the tests prove the mapping, the results and the error classification, not
// the replication itself.
package kafka
