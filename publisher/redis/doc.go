// Package redis publishes outbox messages to Redis Streams.
package redis
