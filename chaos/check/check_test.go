package check

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox"
)

var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// ev builds an event of one message at t0 + sec seconds.
func ev(kind outbox.EventKind, worker string, sec int, id reliar.MessageID) outbox.Event {
	return outbox.Event{Kind: kind, Worker: worker, At: t0.Add(time.Duration(sec) * time.Second), IDs: []reliar.MessageID{id}, Count: 1}
}

func ids(n int) []reliar.MessageID {
	out := make([]reliar.MessageID, n)
	for i := range out {
		out[i] = uuid.New()
	}
	return out
}

func committedOf(ms ...reliar.MessageID) []Committed {
	out := make([]Committed, len(ms))
	for i, id := range ms {
		out[i] = Committed{ID: id, Sequence: int64(i + 1)}
	}
	return out
}

func TestCheckAttribution(t *testing.T) {
	m := ids(3)
	a, b := m[0], m[1]
	other := ev(outbox.EventClaimed, "A", 50, m[2]) // keeps worker A alive late
	tests := []struct {
		name     string
		attempts []reliar.MessageID
		events   []outbox.Event
		dead     []reliar.MessageID
		want     Report
	}{
		{
			name:     "clean run",
			attempts: []reliar.MessageID{a, b},
			events: []outbox.Event{
				ev(outbox.EventClaimed, "A", 1, a), ev(outbox.EventPublished, "A", 2, a), ev(outbox.EventCompleted, "A", 3, a),
				ev(outbox.EventClaimed, "A", 1, b), ev(outbox.EventPublished, "A", 2, b), ev(outbox.EventCompleted, "A", 3, b),
			},
			want: Report{Delivered: 2, Attempts: 2},
		},
		{
			name:     "a message never seen is lost",
			attempts: []reliar.MessageID{a},
			want:     Report{Delivered: 1, Attempts: 1, Lost: 1, LostIDs: []reliar.MessageID{b}},
		},
		{
			name:     "a dead message is not lost",
			attempts: []reliar.MessageID{a},
			dead:     []reliar.MessageID{b},
			want:     Report{Delivered: 1, Attempts: 1, Dead: 1},
		},
		{
			name:     "a message never committed is unknown",
			attempts: []reliar.MessageID{a, b, m[2]},
			want:     Report{Delivered: 2, Attempts: 3, Unknown: 1},
		},
		{
			name:     "window 4: failed publish retried",
			attempts: []reliar.MessageID{a, a, b},
			events: []outbox.Event{
				ev(outbox.EventClaimed, "A", 1, a), ev(outbox.EventPublishFailed, "A", 2, a), ev(outbox.EventFailed, "A", 3, a),
				ev(outbox.EventClaimed, "A", 5, a), ev(outbox.EventPublished, "A", 6, a),
			},
			want: Report{Delivered: 2, Attempts: 3, Duplicates: 1, ByWindow: [5]int{4: 1}},
		},
		{
			name:     "window 3: publish cut off at the drain",
			attempts: []reliar.MessageID{a, a, b},
			events: []outbox.Event{
				ev(outbox.EventClaimed, "A", 1, a), ev(outbox.EventDrainCutOff, "A", 2, a), ev(outbox.EventReleased, "A", 2, a),
				ev(outbox.EventClaimed, "B", 5, a), ev(outbox.EventPublished, "B", 6, a),
			},
			want: Report{Delivered: 2, Attempts: 3, Duplicates: 1, ByWindow: [5]int{3: 1}},
		},
		{
			name:     "window 3: published row left to its lease at the drain",
			attempts: []reliar.MessageID{a, a, b},
			events: []outbox.Event{
				ev(outbox.EventClaimed, "A", 1, a), ev(outbox.EventPublished, "A", 2, a), ev(outbox.EventLeftToLease, "A", 3, a),
				ev(outbox.EventReclaimed, "B", 9, a), ev(outbox.EventPublished, "B", 10, a),
			},
			want: Report{Delivered: 2, Attempts: 3, Duplicates: 1, ByWindow: [5]int{3: 1}},
		},
		{
			name:     "window 1: holder crashed, row reclaimed",
			attempts: []reliar.MessageID{a, a, b},
			events: []outbox.Event{
				ev(outbox.EventClaimed, "A", 1, a),
				ev(outbox.EventReclaimed, "B", 9, a), ev(outbox.EventPublished, "B", 10, a),
			},
			want: Report{Delivered: 2, Attempts: 3, Duplicates: 1, ByWindow: [5]int{1: 1}},
		},
		{
			name:     "window 1: published, then the completion never landed",
			attempts: []reliar.MessageID{a, a, b},
			events: []outbox.Event{
				ev(outbox.EventClaimed, "A", 1, a), ev(outbox.EventPublished, "A", 2, a), ev(outbox.EventOutcomeWriteFailed, "A", 3, a),
				ev(outbox.EventReclaimed, "B", 9, a), ev(outbox.EventPublished, "B", 10, a), other,
			},
			want: Report{Delivered: 2, Attempts: 3, Duplicates: 1, ByWindow: [5]int{1: 1}},
		},
		{
			name:     "window 1: row abandoned after failing outcome writes",
			attempts: []reliar.MessageID{a, a, b},
			events: []outbox.Event{
				ev(outbox.EventClaimed, "A", 1, a), ev(outbox.EventAbandoned, "A", 8, a),
				ev(outbox.EventReclaimed, "B", 9, a), ev(outbox.EventPublished, "B", 10, a), other,
			},
			want: Report{Delivered: 2, Attempts: 3, Duplicates: 1, ByWindow: [5]int{1: 1}},
		},
		{
			name:     "window 2: lease lapsed while the holder still published",
			attempts: []reliar.MessageID{a, a, b},
			events: []outbox.Event{
				ev(outbox.EventClaimed, "A", 1, a),
				ev(outbox.EventReclaimed, "B", 9, a), ev(outbox.EventPublished, "B", 10, a), ev(outbox.EventCompleted, "B", 11, a),
				ev(outbox.EventPublished, "A", 12, a), ev(outbox.EventCompleted, "A", 13, a),
			},
			want: Report{Delivered: 2, Attempts: 3, Duplicates: 1, ByWindow: [5]int{2: 1}},
		},
		{
			name:     "window 2: the stalled holder's publish failed after the reclaim",
			attempts: []reliar.MessageID{a, a, b},
			events: []outbox.Event{
				ev(outbox.EventClaimed, "A", 1, a),
				ev(outbox.EventReclaimed, "B", 9, a), ev(outbox.EventPublished, "B", 10, a),
				ev(outbox.EventPublishFailed, "A", 12, a),
			},
			want: Report{Delivered: 2, Attempts: 3, Duplicates: 1, ByWindow: [5]int{2: 1}},
		},
		{
			name:     "window 4: the publish failed, then the lease lapsed before the retry was written",
			attempts: []reliar.MessageID{a, a, b},
			events: []outbox.Event{
				ev(outbox.EventClaimed, "A", 1, a), ev(outbox.EventPublishFailed, "A", 2, a), ev(outbox.EventOutcomeWriteFailed, "A", 3, a),
				ev(outbox.EventReclaimed, "B", 9, a), ev(outbox.EventPublished, "B", 10, a), other,
			},
			want: Report{Delivered: 2, Attempts: 3, Duplicates: 1, ByWindow: [5]int{4: 1}},
		},
		{
			name:     "a reclaim with no logged holder implies a crashed one",
			attempts: []reliar.MessageID{a, a, b},
			events:   []outbox.Event{ev(outbox.EventReclaimed, "B", 9, a), ev(outbox.EventPublished, "B", 10, a)},
			want:     Report{Delivered: 2, Attempts: 3, Duplicates: 1, ByWindow: [5]int{1: 1}},
		},
		{
			name:     "a duplicate after a clean completion is unattributed",
			attempts: []reliar.MessageID{a, b, a},
			events: []outbox.Event{
				ev(outbox.EventClaimed, "A", 1, a), ev(outbox.EventPublished, "A", 2, a), ev(outbox.EventCompleted, "A", 3, a),
			},
			want: Report{Delivered: 2, Attempts: 3, Duplicates: 1, Unattributed: 1, UnattributedIDs: []reliar.MessageID{a}},
		},
		{
			name:     "a release without publishing explains nothing",
			attempts: []reliar.MessageID{a, a, b},
			events: []outbox.Event{
				ev(outbox.EventClaimed, "A", 1, a), ev(outbox.EventReleased, "A", 2, a),
				ev(outbox.EventClaimed, "B", 5, a), ev(outbox.EventPublished, "B", 6, a),
			},
			want: Report{Delivered: 2, Attempts: 3, Duplicates: 1, Unattributed: 1, UnattributedIDs: []reliar.MessageID{a}},
		},
		{
			name:     "more duplicates than hand-overs",
			attempts: []reliar.MessageID{a, a, a, b},
			events: []outbox.Event{
				ev(outbox.EventClaimed, "A", 1, a), ev(outbox.EventPublishFailed, "A", 2, a),
				ev(outbox.EventClaimed, "A", 5, a), ev(outbox.EventPublished, "A", 6, a), ev(outbox.EventCompleted, "A", 7, a),
			},
			want: Report{Delivered: 2, Attempts: 4, Duplicates: 2, ByWindow: [5]int{4: 1}, Unattributed: 1, UnattributedIDs: []reliar.MessageID{a}},
		},
		{
			name:     "certain hand-overs are credited first",
			attempts: []reliar.MessageID{a, a, b},
			events: []outbox.Event{
				ev(outbox.EventClaimed, "A", 1, a), ev(outbox.EventPublishFailed, "A", 2, a),
				ev(outbox.EventClaimed, "A", 5, a), ev(outbox.EventPublished, "A", 6, a),
				ev(outbox.EventReclaimed, "B", 20, a), ev(outbox.EventPublished, "B", 21, a),
			},
			want: Report{Delivered: 2, Attempts: 3, Duplicates: 1, ByWindow: [5]int{1: 1}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Check(Input{Committed: committedOf(a, b), Attempts: tt.attempts, Events: tt.events, Final: Final{Dead: tt.dead}})
			tt.want.Committed = 2
			if got.String() != tt.want.String() {
				t.Fatalf("report\n got %s\nwant %s", got, tt.want)
			}
			if !equalIDs(got.LostIDs, tt.want.LostIDs) || !equalIDs(got.UnattributedIDs, tt.want.UnattributedIDs) {
				t.Fatalf("ids: lost %v unattributed %v; want %v %v", got.LostIDs, got.UnattributedIDs, tt.want.LostIDs, tt.want.UnattributedIDs)
			}
		})
	}
}

func TestCheckOrder(t *testing.T) {
	m := ids(4)
	committed := []Committed{{m[0], "k", 1}, {m[1], "k", 2}, {m[2], "k", 3}, {m[3], "j", 4}}
	tests := []struct {
		name     string
		attempts []reliar.MessageID
		ordered  bool
		want     int
	}{
		{"in order", []reliar.MessageID{m[0], m[3], m[1], m[2]}, true, 0},
		{"duplicates of earlier rows do not count", []reliar.MessageID{m[0], m[1], m[0], m[2], m[1], m[3]}, true, 0},
		{"a later row first", []reliar.MessageID{m[0], m[2], m[1], m[3]}, true, 1},
		{"reversed", []reliar.MessageID{m[2], m[1], m[0], m[3]}, true, 2},
		{"unordered runs are not checked", []reliar.MessageID{m[2], m[1], m[0], m[3]}, false, 0},
		{"undelivered rows are skipped", []reliar.MessageID{m[0], m[2]}, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Check(Input{Committed: committed, Attempts: tt.attempts, Ordered: tt.ordered})
			if got.OrderViolations != tt.want || len(got.OrderIDs) != tt.want {
				t.Fatalf("order violations = %d %v, want %d", got.OrderViolations, got.OrderIDs, tt.want)
			}
		})
	}
}

func TestReportErr(t *testing.T) {
	id := uuid.New()
	tests := []struct {
		name string
		r    Report
		want []string // substrings; none means nil
	}{
		{"clean", Report{Committed: 3, Delivered: 3, Duplicates: 2, ByWindow: [5]int{1: 2}, Dead: 1}, nil},
		{"lost", Report{Lost: 1, LostIDs: []reliar.MessageID{id}}, []string{"lost=1", id.String()}},
		{"unknown", Report{Unknown: 2}, []string{"never committed=2"}},
		{"unattributed", Report{Unattributed: 1}, []string{"unattributed_duplicates=1"}},
		{"order", Report{OrderViolations: 3}, []string{"order_violations=3"}},
		{"left", Report{LeasedLeft: 1, PendingLeft: 2}, []string{"leased_left=1", "pending_left=2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.r.Err()
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("Err() = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, ErrViolation) {
				t.Fatalf("Err() = %v, want ErrViolation", err)
			}
			for _, s := range tt.want {
				if !strings.Contains(err.Error(), s) {
					t.Fatalf("Err() = %q, want it to contain %q", err, s)
				}
			}
		})
	}
}

func TestListsAreCapped(t *testing.T) {
	m := ids(maxListed + 5)
	r := Check(Input{Committed: committedOf(m...)})
	if r.Lost != len(m) || len(r.LostIDs) != maxListed {
		t.Fatalf("lost = %d with %d ids, want %d with %d", r.Lost, len(r.LostIDs), len(m), maxListed)
	}
}

func equalIDs(a, b []reliar.MessageID) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
