// Package redispub publishes outbox messages to Redis Streams.
//
// Each message is one XADD (entry id "*") to a stream: the one named by
// [WithStream] ("reliar" by default), or the one [WithStreamFunc] picks per
// message, optionally capped with "MAXLEN ~ N" ([WithMaxLen]).
// PublishBatch pipelines the XADDs in one round trip and returns one result
// per envelope.
//
// # Field layout
//
// CloudEvents has no binding for Redis Streams; entries use the names of
// its HTTP and NATS bindings. An entry's fields are the envelope's
// CloudEvents binary-mode headers (see reliar.CloudEventHeaders: ce-id,
// ce-type, ce-source, ce-specversion, ce-time, content-type, the ce-
// extensions, traceparent, user headers, …) in name order, each as one
// field whose value is the header value, followed by one field named
// "payload" holding the payload bytes as they are. A user header named
// "payload" is therefore refused (a permanent failure); one in a
// CloudEvents namespace, which only a row written by plain SQL can carry
// (Enqueue refuses it), is sent renamed ([reliar.RenamedHeader]). Go
// consumers read the id with [MessageID] and rebuild the envelope with
// [Envelope]; consumers in other languages read "payload" and the "ce-"
// fields directly.
//
// # Durability and duplicates
//
// XADD is acknowledged once the entry is in the server's memory. How
// durable it is then depends on the server, not on this package: with
// appendonly yes and appendfsync always an acknowledged entry survives a
// crash; with appendfsync everysec (the usual setting) up to about a second
// of entries can be lost; with RDB snapshots only, everything since the last
// snapshot. Replication is asynchronous, so a failover can also lose
// acknowledged entries. Configure persistence for the guarantee you need.
//
// Redis Streams do not deduplicate. An ambiguous publish outcome (duplicate
// window 4 of the dispatcher: the entry was added but the reply was lost or
// timed out) makes the dispatcher retry the row and the entry is added
// again; consumers deduplicate by the ce-id field (the message id).
//
// # Failures
//
// A condition of one message that no retry can fix is permanent: a user
// header named "payload" ([ErrReservedField]), an empty stream name from
// [WithStreamFunc] ([ErrInvalidStream]). A condition every message shares
// and an operator can fix is transient, so that it feeds the dispatcher's
// circuit breaker and dead-letters nothing: WRONGTYPE (the key holds
// something other than a stream), NOPERM (an ACL forbids the command or
// key), NOAUTH and WRONGPASS. Network errors, timeouts, a closed client,
// LOADING, READONLY (a failover in progress), OOM, max clients, cluster and
// other server errors are transient too.
//
// # Limits
//
// Redis takes values up to proto-max-bulk-len (512 MB by default), far
// above the store's MaxPayloadBytes (1 MiB by default); memory, not a
// per-message limit, bounds a stream ([WithMaxLen]).
package redispub
