package report

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{3}, 3},
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
	} {
		in := append([]float64(nil), tc.in...)
		if got := Median(tc.in); got != tc.want {
			t.Errorf("Median(%v) = %v, want %v", tc.in, got, tc.want)
		}
		for i := range in {
			if in[i] != tc.in[i] {
				t.Fatalf("Median reordered its input: %v", tc.in)
			}
		}
	}
}

func sample() []Result {
	return []Result{
		{Scenario: Enqueue, System: "a", PerSecond: 30_000},
		{Scenario: Drain, System: "a", PerSecond: 10_000, CPUNsPerMsg: 5000},
		{Scenario: Drain, System: "b", PerSecond: 20_000, CPUNsPerMsg: 2000},
		{Scenario: Drain, System: "a", PerSecond: 12_000, CPUNsPerMsg: 7000, Duplicates: 2},
		{Scenario: Drain, System: "b", Error: "boom"},
		{Scenario: Drain, System: "a", PerSecond: 11_000, CPUNsPerMsg: 6000},
		{Scenario: Latency, System: "a", P50Ms: 1, P99Ms: 4},
		{Scenario: Latency, System: "a", P50Ms: 3, P99Ms: 8},
		{Scenario: JetStream, System: "a → js", PerSecond: 5000},
	}
}

func TestSummarize(t *testing.T) {
	sums := Summarize(sample())
	if len(sums) != 5 {
		t.Fatalf("%d summaries, want 5: %+v", len(sums), sums)
	}
	a, ok := Find(sums, Drain, "a")
	if !ok || a.Runs != 3 || a.PerSecond != 11_000 || a.Low != 10_000 || a.High != 12_000 || a.CPUNsPerMsg != 6000 || a.Duplicates != 2 {
		t.Fatalf("drain a = %+v", a)
	}
	b, ok := Find(sums, Drain, "b")
	if !ok || b.Runs != 1 || b.Failed != 1 || b.PerSecond != 20_000 {
		t.Fatalf("drain b = %+v", b)
	}
	lat, ok := Find(sums, Latency, "a")
	if !ok || lat.P50Ms != 2 || lat.P99Ms != 6 {
		t.Fatalf("latency a = %+v", lat)
	}
	if _, ok := Find(sums, Latency, "b"); ok {
		t.Fatal("found a latency summary of b, which ran none")
	}
	failedOnly := Summarize([]Result{{Scenario: Drain, System: "c", Error: "x"}})
	if _, ok := Find(failedOnly, Drain, "c"); ok || failedOnly[0].Failed != 1 {
		t.Fatalf("a system whose runs all failed: %+v", failedOnly)
	}
}

func TestTable(t *testing.T) {
	var b strings.Builder
	rs := append(sample(),
		Result{Scenario: EnqueueTx, System: "a", P50Ms: 0.5, P99Ms: 2},
		Result{Scenario: EnqueueTx, System: "c", P50Ms: 0.7, P99Ms: 12})
	if err := Table(&b, Summarize(rs)); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	for _, want := range []string{
		"| a | 30.0 k (30.0–30.0) | 11.0 k (10.0–12.0) | 2.00 / 6.00 ms | 0.50 / 2.00 ms | 6.00 | 2 | 0 |",
		"| b | – | 20.0 k (20.0–20.0) | – | – | 2.00 | 0 | 1 |",
		"| c | – | – | – | 0.70 / 12 ms | – | 0 | 0 |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "→ js") {
		t.Errorf("the main table shows a jetstream system:\n%s", got)
	}
}

func TestJetStreamTable(t *testing.T) {
	var b strings.Builder
	if err := JetStreamTable(&b, Summarize(sample()[:3])); err != nil || b.Len() != 0 {
		t.Fatalf("no jetstream results: %q, %v", b.String(), err)
	}
	rs := append(sample(), Result{Scenario: JetStream, System: "x → js", Error: "stalled"})
	if err := JetStreamTable(&b, Summarize(rs)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| a → js | 5.0 k (5.0–5.0) | 0.00 | 0 | 0 |", "| x → js | – | – | 0 | 1 |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("jetstream table lacks %q:\n%s", want, b.String())
		}
	}
}

func TestBurstTable(t *testing.T) {
	var b strings.Builder
	if err := BurstTable(&b, Summarize(sample())); err != nil || b.Len() != 0 {
		t.Fatalf("no burst results: %q, %v", b.String(), err)
	}
	rs := []Result{
		{Scenario: BurstAlone, System: "s", PerSecond: 2000, P50Ms: 3, P99Ms: 9},
		{Scenario: Burst, System: "s", PerSecond: 1500, P50Ms: 4, P99Ms: 30, EnqueueTxP50Ms: 3.5, EnqueueTxP99Ms: 11, Duplicates: 1},
		{Scenario: BurstAlone, System: "t", PerSecond: 640},
		{Scenario: Burst, System: "t", Error: "timeout"},
	}
	if err := BurstTable(&b, Summarize(rs)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| s | 2.0 k (2.0–2.0) | 1.5 k (1.5–1.5) | 0.75 | 4.00 / 30 ms | 3.00 / 9.00 ms | 3.50 / 11 ms | 1 | 0 |",
		"| t | 640 (640–640) | – | – | – | 0.00 / 0.00 ms | – | 0 | 1 |",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("burst table lacks %q:\n%s", want, b.String())
		}
	}
}

// quickLine matches a complete quick line: every key of QuickKeys, in
// order, with a number or nan.
var quickLine = regexp.MustCompile(`^` + strings.Join(func() []string {
	var parts []string
	for _, k := range QuickKeys {
		parts = append(parts, k+`=([0-9]+\.[0-9]+|nan)`)
	}
	return parts
}(), " ") + `$`)

func quickSample() []Result {
	return []Result{
		{Scenario: Drain, System: "r", PerSecond: 10_000},
		{Scenario: Drain, System: "raw", PerSecond: 40_000},
		{Scenario: Drain, System: "raw4", PerSecond: 20_000},
		{Scenario: Drain, System: "rawp", PerSecond: 12_500},
		{Scenario: Drain, System: "wm", PerSecond: 20_000},
		{Scenario: Drain, System: "rv", PerSecond: 8_000},
		{Scenario: Enqueue, System: "r", PerSecond: 30_000},
		{Scenario: Enqueue, System: "min", PerSecond: 60_000},
		{Scenario: Enqueue, System: "wm", PerSecond: 40_000},
		{Scenario: EnqueueTx, System: "r", P50Ms: 0.8, P99Ms: 3},
		{Scenario: EnqueueTx, System: "wm", P50Ms: 0.64, P99Ms: 2},
		{Scenario: Latency, System: "r", P50Ms: 1.234, P99Ms: 9.5},
		{Scenario: Latency, System: "rv", P50Ms: 0.9, P99Ms: 3.8},
		{Scenario: JetStream, System: "r js", PerSecond: 18_000},
		{Scenario: JetStream, System: "hand js", PerSecond: 20_000},
		{Scenario: JetStream, System: "hand js 1", PerSecond: 24_000},
		{Scenario: Drain, System: "r sqlite", PerSecond: 9_000},
		{Scenario: Drain, System: "rv sqlite", PerSecond: 3_000},
		{Scenario: BurstAlone, System: "r sqlite", PerSecond: 1_000},
		{Scenario: Burst, System: "r sqlite", PerSecond: 800, P99Ms: 41.5},
		{Scenario: BurstAlone, System: "r demo", PerSecond: 1_000},
		{Scenario: Burst, System: "r demo", PerSecond: 950, P99Ms: 10},
	}
}

var quickNames = QuickSystems{
	Reliar: "r", Raw: "raw", Raw4Conns: "raw4", RawPipelined: "rawp", RawMinimal: "min",
	Watermill: "wm", River: "rv",
	ReliarJetStream: "r js", HandJetStream: "hand js", HandJetStreamOneHeader: "hand js 1",
	ReliarSQLite: "r sqlite", RiverSQLite: "rv sqlite", ReliarSQLiteDemo: "r demo",
}

func TestQuickLine(t *testing.T) {
	line, err := QuickLine(Summarize(quickSample()), quickNames)
	if err != nil {
		t.Fatal(err)
	}
	want := "ratio_vs_raw=0.250 ratio_vs_watermill_tuned=0.500 ratio_vs_river_tuned=1.250 latency_p50_ms=1.23 latency_p99_ms=9.50" +
		" ratio_vs_raw_4conns=0.500 ratio_vs_raw_pipelined=0.800" +
		" enqueue_ratio_vs_raw=0.500 enqueue_ratio_vs_watermill=0.750" +
		" enqueue_tx_p50_ms=0.80 enqueue_tx_p50_ratio_vs_watermill=1.250" +
		" latency_p99_ratio_vs_river_tuned=2.500 river_tuned_latency_p99_ms=3.80" +
		" jetstream_ratio=0.900 jetstream_ratio_vs_one_header=0.750" +
		" sqlite_ratio_vs_river=3.000 sqlite_burst_p99_ms=41.50 sqlite_burst_ratio=0.800" +
		" sqlite_demo_burst_p99_ms=10.00 sqlite_demo_burst_ratio=0.950"
	if line != want || !quickLine.MatchString(line) {
		t.Fatalf("QuickLine = %q\nwant        %q", line, want)
	}
	if !strings.HasPrefix(line, "ratio_vs_raw=0.250 ratio_vs_watermill_tuned=0.500 ratio_vs_river_tuned=1.250 latency_p50_ms=1.23 latency_p99_ms=9.50 ") {
		t.Fatalf("the original keys are not first: %q", line)
	}
}

func TestQuickLineMissing(t *testing.T) {
	var rs []Result
	for _, r := range quickSample() {
		if r.Scenario == Latency && r.System == "rv" || r.Scenario == Burst {
			continue
		}
		rs = append(rs, r)
	}
	rs = append(rs, Result{Scenario: Burst, System: "r sqlite", Error: "timeout"})
	line, err := QuickLine(Summarize(rs), quickNames)
	if !errors.Is(err, ErrMissing) {
		t.Fatalf("error = %v, want ErrMissing", err)
	}
	for _, name := range []string{"latency rv", "burst r sqlite"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error %q does not name %q", err, name)
		}
	}
	if !quickLine.MatchString(line) {
		t.Fatalf("the line is not complete: %q", line)
	}
	for _, kv := range []string{"latency_p99_ratio_vs_river_tuned=nan", "river_tuned_latency_p99_ms=nan", "sqlite_burst_p99_ms=nan", "sqlite_burst_ratio=nan", "latency_p99_ms=9.50"} {
		if !strings.Contains(line, kv) {
			t.Errorf("line lacks %s: %q", kv, line)
		}
	}
}

func TestFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "results")
	start := time.Date(2026, 3, 4, 23, 0, 0, 0, time.UTC)
	f, err := NewFiles(dir, start)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range sample() {
		if err := f.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if got := len(f.Paths()); got != 4 {
		t.Fatalf("%d files, want one per scenario (4)", got)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	file, err := os.Open(filepath.Join(dir, "2026-03-04-drain.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	var lines int
	sc := bufio.NewScanner(file)
	for sc.Scan() {
		var r Result
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		if r.Scenario != Drain {
			t.Fatalf("a %s result in the drain file", r.Scenario)
		}
		lines++
	}
	if lines != 5 {
		t.Fatalf("%d drain lines, want 5", lines)
	}
}
