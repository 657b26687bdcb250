module github.com/reliar/reliar/publisher/webhook

go 1.26.0

require (
	github.com/reliar/reliar v0.0.0
	go.uber.org/goleak v1.3.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/json-iterator/go v1.1.10 // indirect
	github.com/modern-go/concurrent v0.0.0-20180228061459-e0a39a4cb421 // indirect
	github.com/modern-go/reflect2 v0.0.0-20180701023420-4b7aa43c6742 // indirect
	go.opentelemetry.io/otel/trace v1.47.0 // indirect
	go.uber.org/atomic v1.4.0 // indirect
	go.uber.org/multierr v1.1.0 // indirect
	go.uber.org/zap v1.10.0 // indirect
)

require (
	github.com/cloudevents/sdk-go/v2 v2.15.2
	github.com/reliar/reliar/publisher/internal/cetest v0.0.0
	github.com/standard-webhooks/standard-webhooks/libraries v0.0.1
	go.opentelemetry.io/otel v1.47.0
)

replace (
	github.com/reliar/reliar => ../..
	github.com/reliar/reliar/publisher/internal/cetest => ../internal/cetest
)

replace github.com/reliar/reliar/observability/otelobs => ../../observability/otelobs
