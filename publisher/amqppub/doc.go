// Package amqppub publishes outbox messages to RabbitMQ (AMQP 0-9-1) with
// amqp091-go.
//
// # Mapping
//
// Each envelope becomes one persistent message (delivery mode 2) published
// to one exchange, [DefaultExchange] unless [WithExchange] says otherwise,
// with the routing key of [WithRoutingKeyFunc]: by default the envelope's
// partition key (its ordering key, else its conversation id), so that a
// consistent-hash exchange keeps each key on one queue, in order. The
// payload is the body; the message id, type, content type, enqueue time
// (whole seconds), correlation id and reply-to are the properties of the
// same names.
//
// The CloudEvents attributes follow the CloudEvents AMQP protocol binding
// in binary content mode, the one RabbitMQ's AMQP 1.0 support and the
// CloudEvents SDKs' AMQP bindings read: every attribute of
// [reliar.CloudEventAttributes] is an application property — in 0-9-1, a
// header-table entry — named "cloudEvents:" and the attribute
// (cloudEvents:id, cloudEvents:type, cloudEvents:time, …), and the data
// content type is the content-type property. There is no CloudEvents
// binding for AMQP 0-9-1 itself; RabbitMQ carries the header table as the
// 1.0 application properties and back. Every attribute is a string, time
// included: the 0-9-1 timestamp type holds whole seconds and would cut its
// fraction. Headers exchanges can route on cloudEvents:type. The W3C
// traceparent and tracestate headers and the user headers follow; a user
// header in a CloudEvents namespace, which only a row written by plain SQL
// can carry (Enqueue refuses it), is sent renamed ([reliar.RenamedHeader]).
// Consumers read the id with [MessageID] and the envelope with [Envelope],
// which also read the ce- headers of pre-release versions.
//
// # Durability
//
// Every channel is in publisher-confirm mode and every message is published
// mandatory. Publish returns nil only on the broker's ack, which RabbitMQ
// sends once the message is routed to every queue bound for it and, for
// durable and quorum queues, written to disk (for quorum queues, by a
// majority of their replicas). Messages routed to no queue come back as a
// basic.return before the ack and fail transiently ([ErrUnroutable]): the
// rows wait until a queue, or an alternate exchange, is bound. A nack (the
// broker failed to take the message) is transient.
//
// # Errors
//
// A condition of one message that no retry can fix is permanent: a message
// over the broker's max_message_size ([ErrTooLarge]) and a message with a
// field over AMQP's 255-byte limit ([ErrInvalidMessage]). A condition every
// message shares and an operator can fix is transient, so that it feeds the
// dispatcher's circuit breaker and dead-letters nothing: a missing exchange
// (NOT_FOUND; the backlog drains once it is declared again), a refused
// write permission (ACCESS_REFUSED), refused credentials, an unroutable
// message (NO_ROUTE). Everything else — a lost connection or channel, a
// nack, a timeout, a cancelled context — is transient too.
//
// # Limits
//
// RabbitMQ does not announce max_message_size (128 MiB by default; 16 MiB
// from 4.0). A larger message makes the broker close the channel with 406
// PRECONDITION_FAILED, naming the limit: the publisher fails that message
// permanently with [ErrTooLarge], and the other messages in flight on the
// channel, which the broker discarded with it, transiently, so they are
// retried on a new channel. From then on it refuses messages over the
// limit before sending them. The store's MaxPayloadBytes (1 MiB by default)
// is well below the broker's default; raise it only up to max_message_size.
//
// # Connections
//
// The publisher owns one connection and up to [WithPoolSize] channels, each
// used by one call at a time. When the connection closes, a goroutine of
// the publisher reconnects with exponential backoff and jitter
// ([WithReconnectBackoff]); until it succeeds, calls fail at once with the
// transient [ErrNotConnected]. Close stops it and waits for it.
//
// # Duplicates
//
// When the context of a call ends after a message was published but before
// its confirmation arrived, or the connection is lost in between, the call
// returns a transient error while the broker may have taken the message;
// the dispatcher publishes the row again later. This is the fourth
// duplicate window of the outbox (an ambiguous publish outcome); consumers
// deduplicate by the message-id property or the cloudEvents:id header.
package amqppub
