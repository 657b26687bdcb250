// Package nats publishes outbox messages to NATS JetStream.
package nats
