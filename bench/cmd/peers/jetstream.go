package main

import (
	"context"
	"errors"

	"github.com/reliar/reliar/bench/internal/harness"
	"github.com/reliar/reliar/bench/internal/report"
)

// errNotAvailable says why the jetstream scenario cannot run.
var errNotAvailable = errors.New("publisher/nats was not in the repository when this benchmark was built")

// runJetStream would run Reliar through publisher/nats against a
// hand-written PostgreSQL → JetStream pipeline.
func runJetStream(context.Context, *harness.Harness, config, func(report.Result)) ([]report.Result, error) {
	return nil, errNotAvailable
}

// jetStreamTable formats the jetstream results, or returns "" when there
// are none.
func jetStreamTable([]report.Summary) string { return "" }
