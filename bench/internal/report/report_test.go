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
	if err := Table(&b, Summarize(sample())); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	for _, want := range []string{
		"| a | 30.0 k (30.0–30.0) | 11.0 k (10.0–12.0) | 2.00 / 6.00 ms | 6.00 | 2 | 0 |",
		"| b | – | 20.0 k (20.0–20.0) | – | 2.00 | 0 | 1 |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "→ js") {
		t.Errorf("the main table shows a jetstream system:\n%s", got)
	}
}

var quickLine = regexp.MustCompile(`^ratio_vs_raw=[0-9.]+ ratio_vs_watermill_tuned=[0-9.]+ ratio_vs_river_tuned=[0-9.]+ latency_p50_ms=[0-9.]+ latency_p99_ms=[0-9.]+$`)

func TestQuickLine(t *testing.T) {
	rs := []Result{
		{Scenario: Drain, System: "r", PerSecond: 10_000},
		{Scenario: Drain, System: "raw", PerSecond: 40_000},
		{Scenario: Drain, System: "wm", PerSecond: 20_000},
		{Scenario: Drain, System: "rv", PerSecond: 8_000},
		{Scenario: Latency, System: "r", P50Ms: 1.234, P99Ms: 9.5},
	}
	line, err := QuickLine(Summarize(rs), "r", "raw", "wm", "rv")
	if err != nil {
		t.Fatal(err)
	}
	want := "ratio_vs_raw=0.250 ratio_vs_watermill_tuned=0.500 ratio_vs_river_tuned=1.250 latency_p50_ms=1.23 latency_p99_ms=9.50"
	if line != want || !quickLine.MatchString(line) {
		t.Fatalf("QuickLine = %q\nwant        %q", line, want)
	}
	if _, err := QuickLine(Summarize(rs[:4]), "r", "raw", "wm", "rv"); !errors.Is(err, ErrMissing) {
		t.Fatalf("QuickLine without latency: error = %v, want ErrMissing", err)
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
