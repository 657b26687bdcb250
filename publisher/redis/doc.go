// Package redis publishes outbox messages to Redis Streams.
//
// Each message is one XADD (entry id "*") to a stream: the one named by
// [WithStream] ("reliar" by default), or the one [WithStreamFunc] picks per
// message, optionally capped with "MAXLEN ~ N" ([WithMaxLen]).
// PublishBatch pipelines the XADDs in one round trip and returns one result
// per envelope.
//
// # Field layout
//
// An entry's fields are the envelope's CloudEvents binary-mode headers (see
// reliar.CloudEventHeaders: ce-id, ce-type, ce-source, ce-time,
// content-type, traceparent, user headers, …) in name order, each as one
// field whose value is the header value, followed by one field named
// "payload" holding the payload bytes as they are. A user header named
// "payload" is therefore refused (a permanent failure). Go consumers
// rebuild the envelope with [Decode]; consumers in other languages read
// "payload" and the "ce-" fields directly.
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
// WRONGTYPE (the key holds something other than a stream), NOPERM (an ACL
// forbids the command or key), NOAUTH and WRONGPASS are permanent.
// Network errors, timeouts, a closed client, LOADING, READONLY (a failover
// in progress), OOM, max clients, cluster and other server errors are
// transient.
package redis
