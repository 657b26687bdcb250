package report

import (
	"fmt"
	"io"
	"strings"
)

// Table writes one Markdown row per system of the Enqueue, Drain, Latency
// and EnqueueTx scenarios: enqueue and drain throughput (median,
// low–high), idle latency p50/p99, the single-message enqueue
// transaction's p50/p99 and this process's CPU time per drained message. A
// scenario a system did not run shows "–".
func Table(w io.Writer, sums []Summary) error {
	systems := systemsOf(sums, Enqueue, Drain, Latency, EnqueueTx)
	var b strings.Builder
	b.WriteString("| system | enqueue msg/s | drain msg/s | idle latency p50 / p99 | 1-message enqueue tx p50 / p99 | cpu µs/msg (drain) | dups | failed runs |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, sys := range systems {
		enq, _ := Find(sums, Enqueue, sys)
		drain, _ := Find(sums, Drain, sys)
		lat, _ := Find(sums, Latency, sys)
		tx, _ := Find(sums, EnqueueTx, sys)
		failed := enq.Failed + drain.Failed + lat.Failed + tx.Failed
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %d | %d |\n", sys,
			rate(enq), rate(drain), latency(lat), latency(tx), cpu(drain),
			drain.Duplicates+lat.Duplicates, failed)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// JetStreamTable writes one Markdown row per system of the JetStream
// scenario, or nothing when there is none.
func JetStreamTable(w io.Writer, sums []Summary) error {
	systems := systemsOf(sums, JetStream)
	if len(systems) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString("| through JetStream | drain msg/s | cpu µs/msg | dups | failed runs |\n|---|---|---|---|---|\n")
	for _, sys := range systems {
		s, _ := Find(sums, JetStream, sys)
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %d |\n", sys, rate(s), cpu(s), s.Duplicates, s.Failed)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// BurstTable writes one Markdown row per system of the burst scenarios:
// the producers' commit rate alone, the rate delivered while dispatching,
// the ratio of the two medians, commit → delivery p50/p99, and the
// producers' transaction p50/p99 while dispatching. It writes nothing when
// there is no burst result.
func BurstTable(w io.Writer, sums []Summary) error {
	systems := systemsOf(sums, Burst, BurstAlone)
	if len(systems) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString("| burst (producers at full speed) | commits/s alone | delivered/s dispatching | ratio | commit → delivery p50 / p99 | producer tx p50 / p99 alone | producer tx p50 / p99 dispatching | dups | failed runs |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|\n")
	for _, sys := range systems {
		alone, _ := Find(sums, BurstAlone, sys)
		with, _ := Find(sums, Burst, sys)
		ratio := "–"
		if alone.Runs > 0 && with.Runs > 0 {
			ratio = fmt.Sprintf("%.2f", with.PerSecond/alone.PerSecond)
		}
		txWith := "–"
		if with.Runs > 0 {
			txWith = fmt.Sprintf("%s / %s ms", num(with.EnqueueTxP50Ms), num(with.EnqueueTxP99Ms))
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %d | %d |\n", sys,
			rate(alone), rate(with), ratio, latency(with), latency(alone), txWith,
			with.Duplicates, alone.Failed+with.Failed)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// systemsOf lists the systems with a summary in any of scenarios, in the
// order in which they first appear.
func systemsOf(sums []Summary, scenarios ...string) []string {
	var systems []string
	seen := map[string]bool{}
	for _, s := range sums {
		for _, sc := range scenarios {
			if s.Scenario == sc && !seen[s.System] {
				seen[s.System] = true
				systems = append(systems, s.System)
			}
		}
	}
	return systems
}

// rate formats a throughput median with its range, in thousands from 1,000
// up.
func rate(s Summary) string {
	if s.Runs == 0 {
		return "–"
	}
	if s.PerSecond < 1000 {
		return fmt.Sprintf("%.0f (%.0f–%.0f)", s.PerSecond, s.Low, s.High)
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
