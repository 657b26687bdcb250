module github.com/reliar/reliar/publisher/amqp

go 1.26.0

require github.com/reliar/reliar v0.0.0

require (
	github.com/google/uuid v1.6.0 // indirect
	github.com/rabbitmq/amqp091-go v1.16.0 // indirect
	go.uber.org/goleak v1.3.0 // indirect
)

replace github.com/reliar/reliar => ../..
