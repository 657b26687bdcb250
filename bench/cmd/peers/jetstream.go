package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/reliar/reliar/bench/internal/harness"
	"github.com/reliar/reliar/bench/internal/jetstreamrun"
	"github.com/reliar/reliar/bench/internal/reliarrun"
	"github.com/reliar/reliar/bench/internal/report"
)

// jetStreamSystems are the systems of the jetstream scenario: Reliar
// through publisher/nats at default and batch settings, and the
// hand-written PostgreSQL → JetStream loop.
func jetStreamSystems(c config) []harness.System {
	if !c.scenarios["jetstream"] || c.quick {
		return nil
	}
	all := []harness.System{
		jetstreamrun.Reliar(c.natsURL, reliarrun.Defaults()),
		jetstreamrun.Reliar(c.natsURL, reliarrun.Batch512()),
		jetstreamrun.HandWritten(c.natsURL),
	}
	// Variants that run only when named, like the drain scenario's.
	var named []harness.System
	for _, v := range reliarrun.Options() {
		named = append(named, jetstreamrun.Reliar(c.natsURL, v))
	}
	all = slices.DeleteFunc(all, func(s harness.System) bool { return len(c.only) > 0 && !slices.Contains(c.only, s.Name) })
	for _, s := range named {
		if slices.Contains(c.only, s.Name) {
			all = append(all, s)
		}
	}
	return all
}

// jetStreamTable formats the jetstream results, or returns "" when there
// are none.
func jetStreamTable(sums []report.Summary) string {
	var b strings.Builder
	for _, s := range sums {
		if s.Scenario != report.JetStream {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("| through JetStream | drain msg/s | cpu µs/msg | dups | failed runs |\n|---|---|---|---|---|\n")
		}
		if s.Runs == 0 {
			fmt.Fprintf(&b, "| %s | – | – | – | %d |\n", s.System, s.Failed)
			continue
		}
		fmt.Fprintf(&b, "| %s | %.1f k (%.1f–%.1f) | %.1f | %d | %d |\n", s.System,
			s.PerSecond/1000, s.Low/1000, s.High/1000, s.CPUNsPerMsg/1000, s.Duplicates, s.Failed)
	}
	return b.String()
}
