package report

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// ErrMissing is returned by QuickLine when a run it needs did not succeed.
var ErrMissing = errors.New("report: no successful run")

// QuickSystems names the systems whose medians the quick line compares.
type QuickSystems struct {
	// Reliar is Reliar at default settings on PostgreSQL.
	Reliar string
	// Raw, Raw4Conns and RawPipelined are the raw loops on pgstore's
	// table: the pinned two workers, four workers, and the pipelined loop.
	Raw, Raw4Conns, RawPipelined string
	// RawMinimal is the raw loop on the minimal table, whose producer is
	// the 3-column multi-row INSERT.
	RawMinimal string
	// Watermill and River are the tuned peers on PostgreSQL.
	Watermill, River string
	// ReliarJetStream is Reliar at default settings through JetStream;
	// HandJetStream the hand-written pipeline sending the same headers;
	// HandJetStreamOneHeader the pipeline sending only Nats-Msg-Id.
	ReliarJetStream, HandJetStream, HandJetStreamOneHeader string
	// ReliarSQLite and RiverSQLite are both on SQLite.
	ReliarSQLite, RiverSQLite string
	// ReliarSQLiteDemo is Reliar on SQLite as `reliar demo` sets it up.
	ReliarSQLiteDemo string
}

// QuickKeys are the keys of the quick line, in order: the first five are
// the line's original keys.
var QuickKeys = []string{
	"ratio_vs_raw", "ratio_vs_watermill_tuned", "ratio_vs_river_tuned", "latency_p50_ms", "latency_p99_ms",
	"ratio_vs_raw_4conns", "ratio_vs_raw_pipelined",
	"enqueue_ratio_vs_raw", "enqueue_ratio_vs_watermill",
	"enqueue_tx_p50_ms", "enqueue_tx_p50_ratio_vs_watermill",
	"latency_p99_ratio_vs_river_tuned", "river_tuned_latency_p99_ms",
	"jetstream_ratio", "jetstream_ratio_vs_one_header",
	"sqlite_ratio_vs_river", "sqlite_burst_p99_ms", "sqlite_burst_ratio",
	"sqlite_demo_burst_p99_ms", "sqlite_demo_burst_ratio",
}

// QuickLine is the last line of a quick run, key=value pairs in the order
// of QuickKeys. Ratios are ours over theirs, of median throughput (drain,
// enqueue, JetStream drain, SQLite drain, the burst's delivered rate over
// the same producers' commit rate alone) or of median latency (the
// single-message transaction's p50, the idle latency's p99), so that a
// ratio above 1 is ahead for throughput and behind for latency. A value
// whose runs all failed is "nan", and the error, wrapping ErrMissing, names
// every one of them: the line is complete either way.
func QuickLine(sums []Summary, n QuickSystems) (string, error) {
	var missing []string
	get := func(scenario, system string) (Summary, bool) {
		s, ok := Find(sums, scenario, system)
		if !ok {
			missing = append(missing, scenario+" "+system)
		}
		return s, ok
	}
	ratio := func(scenario, ours, theirs string, of func(Summary) float64) float64 {
		a, okA := get(scenario, ours)
		b, okB := get(scenario, theirs)
		if !okA || !okB || of(b) == 0 {
			return math.NaN()
		}
		return of(a) / of(b)
	}
	value := func(scenario, system string, of func(Summary) float64) float64 {
		s, ok := get(scenario, system)
		if !ok {
			return math.NaN()
		}
		return of(s)
	}
	rate := func(s Summary) float64 { return s.PerSecond }
	p50 := func(s Summary) float64 { return s.P50Ms }
	p99 := func(s Summary) float64 { return s.P99Ms }
	burstRatio := func(system string) float64 {
		with, okWith := get(Burst, system)
		alone, okAlone := get(BurstAlone, system)
		if !okWith || !okAlone || alone.PerSecond == 0 {
			return math.NaN()
		}
		return with.PerSecond / alone.PerSecond
	}
	vals := []float64{
		ratio(Drain, n.Reliar, n.Raw, rate),
		ratio(Drain, n.Reliar, n.Watermill, rate),
		ratio(Drain, n.Reliar, n.River, rate),
		value(Latency, n.Reliar, p50),
		value(Latency, n.Reliar, p99),
		ratio(Drain, n.Reliar, n.Raw4Conns, rate),
		ratio(Drain, n.Reliar, n.RawPipelined, rate),
		ratio(Enqueue, n.Reliar, n.RawMinimal, rate),
		ratio(Enqueue, n.Reliar, n.Watermill, rate),
		value(EnqueueTx, n.Reliar, p50),
		ratio(EnqueueTx, n.Reliar, n.Watermill, p50),
		ratio(Latency, n.Reliar, n.River, p99),
		value(Latency, n.River, p99),
		ratio(JetStream, n.ReliarJetStream, n.HandJetStream, rate),
		ratio(JetStream, n.ReliarJetStream, n.HandJetStreamOneHeader, rate),
		ratio(Drain, n.ReliarSQLite, n.RiverSQLite, rate),
		value(Burst, n.ReliarSQLite, p99),
		burstRatio(n.ReliarSQLite),
		value(Burst, n.ReliarSQLiteDemo, p99),
		burstRatio(n.ReliarSQLiteDemo),
	}
	var b strings.Builder
	for i, key := range QuickKeys {
		if i > 0 {
			b.WriteByte(' ')
		}
		format := "%s=%.3f"
		if strings.HasSuffix(key, "_ms") {
			format = "%s=%.2f"
		}
		if math.IsNaN(vals[i]) {
			format = "%s=nan"
			fmt.Fprintf(&b, format, key)
			continue
		}
		fmt.Fprintf(&b, format, key, vals[i])
	}
	if len(missing) > 0 {
		return b.String(), fmt.Errorf("%w: %s", ErrMissing, strings.Join(dedupe(missing), ", "))
	}
	return b.String(), nil
}

// dedupe drops repeated strings, keeping the first of each.
func dedupe(xs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
