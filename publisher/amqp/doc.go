// Package amqp publishes outbox messages to RabbitMQ (AMQP 0-9-1) with
// amqp091-go.
//
// # Mapping
//
// Each envelope becomes one persistent message (delivery mode 2) published
// to one exchange, [DefaultExchange] unless [Exchange] says otherwise, with
// the routing key of [RoutingKeyFunc]: by default the envelope's partition
// key (its ordering key, else its conversation id), so that a
// consistent-hash exchange keeps each key on one queue, in order. The
// message type travels in the type property and in ce-type, for topic and
// headers exchanges. The payload is the body; the message id, type,
// content type, enqueue time, correlation id and reply-to are the
// properties of the same names; the CloudEvents binary-mode headers of
// [reliar.CloudEventHeaders] are the header table.
//
// # Durability
//
// Every channel is in publisher-confirm mode and every message is published
// mandatory. Publish returns nil only on the broker's ack, which RabbitMQ
// sends once the message is routed to every queue bound for it and, for
// durable and quorum queues, written to disk (for quorum queues, by a
// majority of their replicas). Messages routed to no queue come back as a
// basic.return before the ack and fail permanently ([ErrUnroutable]): bind
// a queue, or an alternate exchange, before publishing. A nack (the broker
// failed to take the message) is transient.
//
// # Errors
//
// A missing exchange (NOT_FOUND), a refused write permission
// (ACCESS_REFUSED), a message over the broker's max_message_size
// (PRECONDITION_FAILED), an unroutable message (NO_ROUTE) and a message
// with a field over AMQP's 255-byte limit are permanent. The first three
// close the channel, which the publisher replaces on next use. Everything
// else — a lost connection or channel, a nack, a timeout, a cancelled
// context — is transient.
//
// # Connections
//
// The publisher owns one connection and up to [PoolSize] channels, each
// used by one call at a time. When the connection closes, a goroutine of
// the publisher reconnects with exponential backoff and jitter
// ([ReconnectBackoff]); until it succeeds, calls fail at once with the
// transient [ErrNotConnected]. Close stops it and waits for it.
//
// # Duplicates
//
// When the context of a call ends after a message was published but before
// its confirmation arrived, or the connection is lost in between, the call
// returns a transient error while the broker may have taken the message;
// the dispatcher publishes the row again later. This is the fourth
// duplicate window of the outbox (an ambiguous publish outcome); consumers
// deduplicate by the message-id property or the ce-id header.
package amqp
