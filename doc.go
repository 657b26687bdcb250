// Package reliar holds the types shared by every part of Reliar, a transactional
// outbox for Go: message ids, envelopes and their metadata, serializers, the
// serialized form a publisher receives, the Publisher interfaces and the two
// failure classes.
//
// An application writes a message into the outbox table inside the same database
// transaction as the business change that caused it (see the store packages);
// the dispatcher in package outbox later publishes it through a [Publisher].
// Delivery is durable at-least-once, never exactly-once: consumers deduplicate
// by [MessageID].
package reliar
