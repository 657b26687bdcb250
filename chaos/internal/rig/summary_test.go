package rig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/chaos/check"
	"github.com/reliar/reliar/outbox"
)

func TestTallySummaryEndsWithTheTotals(t *testing.T) {
	var tl Tally
	tl.Add("S2", check.Report{Committed: 10, Delivered: 10, Duplicates: 3, ByWindow: [5]int{2: 3}})
	tl.Add("S1", check.Report{Committed: 5, Delivered: 4, Lost: 1, Duplicates: 1, Unattributed: 1, LeasedLeft: 2})
	tl.Add("S1", check.Report{Committed: 5, Delivered: 5})
	path := filepath.Join(t.TempDir(), "summary.txt")
	if err := tl.WriteSummary(path, "chaos: relay=child"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	want := []string{
		"chaos: relay=child",
		"chaos: S1 runs=2 committed=10 delivered=9 ",
		"chaos: S2 runs=1 committed=10 delivered=10 ",
		"chaos: scenarios=2 runs=3 lost=1 unattributed_duplicates=1 duplicates=4 leased_left=2",
	}
	if len(lines) != len(want) {
		t.Fatalf("summary:\n%s", b)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d = %q, want prefix %q", i, lines[i], w)
		}
	}
}

func TestPublishedNotCompleted(t *testing.T) {
	a, b, c := uuid.New(), uuid.New(), uuid.New()
	at := time.Now()
	ev := func(k outbox.EventKind, ids ...reliar.MessageID) outbox.Event {
		return outbox.Event{Kind: k, At: at, IDs: ids, Count: len(ids)}
	}
	evs := []outbox.Event{
		ev(outbox.EventClaimed, a, b, c),
		ev(outbox.EventPublished, a), ev(outbox.EventPublished, b), ev(outbox.EventPublished, c),
		ev(outbox.EventCompleted, a), ev(outbox.EventFailed, c),
	}
	got := PublishedNotCompleted(evs)
	if len(got) != 1 || got[0] != b {
		t.Fatalf("PublishedNotCompleted = %v, want [%s]", got, b)
	}
}

func TestWithAppName(t *testing.T) {
	got := withAppName("postgres://u@h:5432/db?sslmode=disable", "chaos_x")
	if !strings.Contains(got, "application_name=chaos_x") || !strings.Contains(got, "sslmode=disable") {
		t.Fatalf("withAppName = %q", got)
	}
}

func TestHistory(t *testing.T) {
	id, other := uuid.New(), uuid.New()
	at := time.Date(2025, 1, 1, 10, 0, 0, 0, time.UTC)
	in := check.Input{
		Attempts: []reliar.MessageID{other, id, id},
		Events: []outbox.Event{
			{Kind: outbox.EventPublished, Worker: "w1", At: at.Add(time.Second), IDs: []reliar.MessageID{id}},
			{Kind: outbox.EventClaimed, Worker: "w1", At: at, IDs: []reliar.MessageID{other, id}},
			{Kind: outbox.EventClaimed, Worker: "w2", At: at, IDs: []reliar.MessageID{other}},
		},
	}
	got := history(in, id)
	claimed, published := strings.Index(got, "claimed"), strings.Index(got, "published")
	if claimed < 0 || published < claimed || strings.Contains(got, "w2") || !strings.Contains(got, "attempts [1 2] of 3") {
		t.Fatalf("history:\n%s", got)
	}
}
