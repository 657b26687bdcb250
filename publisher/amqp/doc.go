// Package amqp publishes outbox messages to RabbitMQ.
package amqp
