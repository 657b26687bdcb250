package demo

import (
	"testing"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox"
)

// outboxSettingsInvalid is invalid: a negative batch size.
var outboxSettingsInvalid = outbox.Settings{BatchSize: -1}

func TestTransactionsFor(t *testing.T) {
	tests := []struct{ committed, want int }{
		{0, 0}, {1, 1}, {9, 9}, {10, 11}, {18, 19}, {19, 21}, {10000, 11111},
	}
	for _, tt := range tests {
		got := transactionsFor(tt.committed)
		if got != tt.want {
			t.Fatalf("transactionsFor(%d) = %d, want %d", tt.committed, got, tt.want)
		}
		if kept := got - got/RollbackEvery; kept != tt.committed {
			t.Fatalf("%d transactions keep %d, want %d", got, kept, tt.committed)
		}
	}
}

func TestPercentile(t *testing.T) {
	ms := func(n ...int) []time.Duration {
		out := make([]time.Duration, len(n))
		for i, v := range n {
			out[i] = time.Duration(v) * time.Millisecond
		}
		return sortDurations(out)
	}
	tests := []struct {
		name    string
		samples []time.Duration
		p       float64
		want    time.Duration
	}{
		{"none", nil, 50, 0},
		{"one", ms(7), 99, 7 * time.Millisecond},
		{"median of four", ms(4, 1, 3, 2), 50, 2 * time.Millisecond},
		{"p99 of hundred", ms(seq(100)...), 99, 99 * time.Millisecond},
		{"p100", ms(seq(100)...), 100, 100 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := percentile(tt.samples, tt.p); got != tt.want {
				t.Fatalf("percentile = %v, want %v", got, tt.want)
			}
		})
	}
}

func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i + 1
	}
	return out
}

func TestTally(t *testing.T) {
	start := time.Now()
	ids := make([]reliar.MessageID, 5)
	for i := range ids {
		ids[i] = reliar.NewMessageID()
	}
	ord := &orders{
		commits: []commit{
			{id: ids[0], at: start.Add(1 * time.Millisecond)},
			{id: ids[1], at: start.Add(2 * time.Millisecond)},
			{id: ids[2], at: start.Add(3 * time.Millisecond)},
		},
		rolledBack: []reliar.MessageID{ids[3]},
	}
	cons := &consumer{
		deliveries: map[reliar.MessageID]*delivery{
			ids[0]: {first: start.Add(5 * time.Millisecond), count: 1},
			// Delivered before its commit was recorded: latency 0.
			ids[1]: {first: start.Add(1 * time.Millisecond), count: 3},
			// A rolled-back order's message must never arrive.
			ids[3]: {first: start.Add(9 * time.Millisecond), count: 1},
		},
		unreadable: 1,
	}
	res := tally(ord, cons, start)
	want := Result{Committed: 3, RolledBack: 1, Delivered: 2, Lost: 1, Duplicates: 2, Unexpected: 2,
		Elapsed: 5 * time.Millisecond, Throughput: 400, P50: 0, P99: 4 * time.Millisecond}
	if res != want {
		t.Fatalf("tally =\n%+v, want\n%+v", res, want)
	}
	if res.OK() {
		t.Fatal("a run that lost a message is not OK")
	}
}

func TestSummary(t *testing.T) {
	res := Result{Committed: 10000, RolledBack: 1111, Published: 10000, Delivered: 10000, Duplicates: 2,
		Throughput: 2500.4, P50: 4300 * time.Microsecond, P99: 12 * time.Millisecond}
	want := "demo: committed=10000 rolled_back=1111 published=10000 delivered=10000 lost=0 duplicates=2 throughput=2500/s p50=4.3ms p99=12ms"
	if got := res.Summary(); got != want {
		t.Fatalf("Summary() =\n%s, want\n%s", got, want)
	}
	if !summaryLine.MatchString(want) {
		t.Fatal("the test's own regexp rejects the specified line")
	}
}
