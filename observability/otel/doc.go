// Package otel connects Reliar to OpenTelemetry: metrics, and claim and publish spans.
package otel
