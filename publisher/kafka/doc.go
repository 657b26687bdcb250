// Package kafka publishes outbox messages to Kafka with franz-go.
package kafka
