// Package prometheus exports Reliar's outbox metrics to Prometheus.
package prometheus
