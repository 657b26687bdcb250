package report

import (
	"fmt"
	"io"
	"strings"
)

// Table writes one Markdown row per system of the Enqueue, Drain and
// Latency scenarios: enqueue and drain throughput
// (median, low–high), idle latency p50/p99 and this process's CPU time per
// drained message. A scenario a system did not run shows "–".
func Table(w io.Writer, sums []Summary) error {
	var systems []string
	seen := map[string]bool{}
	for _, s := range sums {
		if s.Scenario != Enqueue && s.Scenario != Drain && s.Scenario != Latency {
			continue
		}
		if !seen[s.System] {
			seen[s.System] = true
			systems = append(systems, s.System)
		}
	}
	var b strings.Builder
	b.WriteString("| system | enqueue msg/s | drain msg/s | idle latency p50 / p99 | cpu µs/msg (drain) | dups | failed runs |\n")
	b.WriteString("|---|---|---|---|---|---|---|\n")
	for _, sys := range systems {
		enq, _ := Find(sums, Enqueue, sys)
		drain, _ := Find(sums, Drain, sys)
		lat, _ := Find(sums, Latency, sys)
		failed := enq.Failed + drain.Failed + lat.Failed
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %d | %d |\n", sys,
			rate(enq), rate(drain), latency(lat), cpu(drain),
			drain.Duplicates+lat.Duplicates, failed)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// rate formats a throughput median with its range, in thousands.
func rate(s Summary) string {
	if s.Runs == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f k (%.1f–%.1f)", s.PerSecond/1000, s.Low/1000, s.High/1000)
}

func latency(s Summary) string {
	if s.Runs == 0 {
		return "–"
	}
	return fmt.Sprintf("%s / %s ms", num(s.P50Ms), num(s.P99Ms))
}

func cpu(s Summary) string {
	if s.Runs == 0 {
		return "–"
	}
	return num(s.CPUNsPerMsg / 1000)
}

// num formats x with two significant decimals below 10 and none above.
func num(x float64) string {
	if x < 10 {
		return fmt.Sprintf("%.2f", x)
	}
	return fmt.Sprintf("%.0f", x)
}
