module github.com/reliar/reliar/publisher/amqppub

go 1.26.0

require (
	github.com/google/uuid v1.6.0
	github.com/rabbitmq/amqp091-go v1.16.0
	github.com/reliar/reliar v0.0.0
	go.uber.org/goleak v1.3.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/go-logr/logr v1.4.4 // indirect
	github.com/go-logr/stdr v1.2.2 // indirect
	go.opentelemetry.io/auto/sdk v1.2.1 // indirect
	go.opentelemetry.io/otel v1.47.0 // indirect
	go.opentelemetry.io/otel/log v1.47.0 // indirect
	go.opentelemetry.io/otel/metric v1.47.0 // indirect
	go.opentelemetry.io/otel/trace v1.47.0 // indirect
)

require (
	github.com/Azure/go-amqp v0.17.0
	github.com/cloudevents/sdk-go/protocol/amqp/v2 v2.15.2
	github.com/cloudevents/sdk-go/v2 v2.15.2
	github.com/json-iterator/go v1.1.10 // indirect
	github.com/modern-go/concurrent v0.0.0-20180228061459-e0a39a4cb421 // indirect
	github.com/modern-go/reflect2 v0.0.0-20180701023420-4b7aa43c6742 // indirect
	github.com/reliar/reliar/observability/otelobs v0.0.0
	github.com/reliar/reliar/publisher/internal/cetest v0.0.0
)

replace github.com/reliar/reliar => ../..

replace github.com/reliar/reliar/publisher/internal/cetest => ../internal/cetest

replace github.com/reliar/reliar/observability/otelobs => ../../observability/otelobs
