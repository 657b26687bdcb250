// Package deploy holds the tests of what runs the relay in production: the
// Grafana dashboard, the Prometheus alert rules, the relay's OCI image and
// its Helm chart. See README.md in this folder.
package deploy
