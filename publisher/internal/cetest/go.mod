module github.com/reliar/reliar/publisher/internal/cetest

go 1.26.0

require (
	github.com/cloudevents/sdk-go/v2 v2.15.2
	github.com/reliar/reliar v0.0.0
)

require github.com/cespare/xxhash/v2 v2.3.0 // indirect

require (
	github.com/google/uuid v1.6.0 // indirect
	github.com/json-iterator/go v1.1.10 // indirect
	github.com/modern-go/concurrent v0.0.0-20180228061459-e0a39a4cb421 // indirect
	github.com/modern-go/reflect2 v0.0.0-20180701023420-4b7aa43c6742 // indirect
	go.opentelemetry.io/otel v1.47.0
	go.opentelemetry.io/otel/trace v1.47.0
)

replace github.com/reliar/reliar => ../../..
