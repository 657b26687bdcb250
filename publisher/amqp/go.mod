module github.com/reliar/reliar/publisher/amqp

go 1.26.0

require (
	github.com/google/uuid v1.6.0
	github.com/rabbitmq/amqp091-go v1.16.0
	github.com/reliar/reliar v0.0.0
	go.uber.org/goleak v1.3.0
)

replace github.com/reliar/reliar => ../..
