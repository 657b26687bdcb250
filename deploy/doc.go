// Package deploy holds the tests of what runs the relay in production: the
// Grafana dashboard, the Prometheus alert rules, the relay's OCI image and
// its Helm chart. The repository README's "Running in production" says
// how to use them.
package deploy
