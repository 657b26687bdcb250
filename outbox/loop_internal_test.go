package outbox

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// testLoop is a loop that has not run: its rules can be read off its state.
func testLoop(t *testing.T, s Settings) *loop {
	t.Helper()
	s = s.WithDefaults()
	d := &Dispatcher{settings: s, log: slog.New(slog.DiscardHandler), metrics: NoopMetrics{}, tracer: NoopTracer{}}
	l := newLoop(d, "w")
	l.storeCtx = t.Context()
	l.pubCtx, l.cancelPub = context.WithCancel(l.storeCtx)
	t.Cleanup(l.cancelPub)
	return l
}

// holdRows makes l hold n rows in state st.
func holdRows(l *loop, n int, st rowState) {
	for range n {
		id := reliar.NewMessageID()
		l.rows[outboxdriver.Lease{ID: id, Token: id}] = &trackedRow{state: st}
	}
}

func TestClaimSizeKeepsMaxInFlight(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                   string
		maxInFlight, batchSize int
		held, asked, reserved  int
		breakerOpen, draining  bool
		want                   int
	}{
		{name: "empty: a full batch", maxInFlight: 100, batchSize: 40, want: 40},
		{name: "room smaller than a batch", maxInFlight: 100, batchSize: 40, held: 70, want: 30},
		{name: "hand-off reservations count", maxInFlight: 100, batchSize: 40, held: 50, reserved: 25, want: 25},
		{name: "less than half a claim free: none", maxInFlight: 100, batchSize: 40, held: 70, reserved: 11, want: 0},
		{name: "reservations alone fill it", maxInFlight: 100, batchSize: 40, reserved: 100, want: 0},
		{name: "a claim in flight: none", maxInFlight: 100, batchSize: 40, asked: 40, want: 0},
		{name: "MaxInFlight below the batch", maxInFlight: 10, batchSize: 40, held: 4, want: 6},
		{name: "one row of room at MaxInFlight 1", maxInFlight: 1, batchSize: 40, want: 1},
		{name: "draining: none", maxInFlight: 100, batchSize: 40, draining: true, want: 0},
		{name: "breaker open, nothing held: a probe", maxInFlight: 100, batchSize: 40, breakerOpen: true, want: 1},
		{name: "breaker open, rows held: none", maxInFlight: 100, batchSize: 40, held: 1, breakerOpen: true, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l := testLoop(t, Settings{MaxInFlight: tt.maxInFlight, BatchSize: tt.batchSize})
			holdRows(l, tt.held, rowPublishing)
			l.ho.reserved.Store(int64(tt.reserved))
			l.breaker.open = tt.breakerOpen
			l.draining = tt.draining
			if tt.asked > 0 {
				l.acq.start(time.Now(), time.Second, acquireResult{want: tt.asked})
			}
			got := l.claimSize()
			if got != tt.want {
				t.Fatalf("claimSize() = %d, want %d", got, tt.want)
			}
			if total := tt.held + tt.asked + tt.reserved + got; got > 0 && total > tt.maxInFlight {
				t.Fatalf("held %d + asked %d + reserved %d + claim %d = %d exceeds MaxInFlight %d", tt.held, tt.asked, tt.reserved, got, total, tt.maxInFlight)
			}
		})
	}
}

// Rows asked for by the claim in flight count for producers as soon as the
// claim starts, and stop counting when it lands.
func TestHandoffReserveKeepsMaxInFlight(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                     string
		held, asked, reserved, n int
		closed                   bool
		want                     bool
	}{
		{name: "room", held: 3, asked: 2, reserved: 1, n: 3, want: true},
		{name: "exactly full", held: 3, asked: 2, reserved: 2, n: 3, want: true},
		{name: "one over, through rows asked for", held: 3, asked: 3, reserved: 2, n: 3, want: false},
		{name: "one over, through reservations", held: 3, reserved: 5, n: 3, want: false},
		{name: "closed (draining or breaker open)", closed: true, n: 1, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l := testLoop(t, Settings{MaxInFlight: 10, BatchSize: 10})
			holdRows(l, tt.held, rowQueued)
			if tt.asked > 0 {
				l.acq.start(time.Now(), time.Second, acquireResult{want: tt.asked})
			}
			l.draining = tt.closed
			l.syncHandoff()
			l.ho.reserved.Store(int64(tt.reserved))
			if got := l.ho.reserve(tt.n); got != tt.want {
				t.Fatalf("reserve(%d) = %v, want %v", tt.n, got, tt.want)
			}
			want := int64(tt.reserved)
			if tt.want {
				want += int64(tt.n)
			}
			if got := l.ho.reserved.Load(); got != want {
				t.Fatalf("reserved = %d after reserve, want %d", got, want)
			}
		})
	}
	t.Run("a claim landing frees its rows asked for", func(t *testing.T) {
		t.Parallel()
		l := testLoop(t, Settings{MaxInFlight: 10, BatchSize: 10})
		l.acq.start(time.Now(), time.Second, acquireResult{want: 10})
		l.syncHandoff()
		if l.ho.reserve(1) {
			t.Fatal("reserve(1) succeeded while a claim for every row was in flight")
		}
		l.acq.end()
		l.syncHandoff()
		if !l.ho.reserve(1) {
			t.Fatal("reserve(1) failed with nothing held")
		}
	})
}

func TestDrainPhases(t *testing.T) {
	t.Parallel()
	tests := []struct {
		drain, store         time.Duration
		pubBefore, relBefore time.Duration // how long before D each phase starts
	}{
		{drain: 30 * time.Second, store: 5 * time.Second, pubBefore: 5 * time.Second, relBefore: 2500 * time.Millisecond},
		{drain: 4 * time.Second, store: 5 * time.Second, pubBefore: 2 * time.Second, relBefore: time.Second},
		{drain: 10 * time.Second, store: 5 * time.Second, pubBefore: 5 * time.Second, relBefore: 2500 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.drain.String()+"/"+tt.store.String(), func(t *testing.T) {
			t.Parallel()
			l := testLoop(t, Settings{DrainTimeout: tt.drain, StoreTimeout: tt.store})
			holdRows(l, 2, rowQueued)
			publishing := &trackedRow{state: rowPublishing}
			l.rows[outboxdriver.Lease{ID: reliar.NewMessageID()}] = publishing
			l.publishing = 1
			var queued []*trackedRow
			for _, row := range l.rows {
				if row.state == rowQueued {
					queued = append(queued, row)
				}
			}
			l.queue = queued
			now := time.Now()
			l.startDrain(now)
			if got := l.drainAt.Sub(now); got != tt.drain {
				t.Errorf("D = now + %v, want now + DrainTimeout %v", got, tt.drain)
			}
			if got := l.drainAt.Sub(l.pubDueAt); got != tt.pubBefore {
				t.Errorf("publish cut-off at D - %v, want D - %v", got, tt.pubBefore)
			}
			if got := l.drainAt.Sub(l.relDueAt); got != tt.relBefore {
				t.Errorf("release of unwritten failures at D - %v, want D - %v", got, tt.relBefore)
			}
			// Phase 1: claims stop, queued rows are released, publishes run on.
			if n := l.claimSize(); n != 0 {
				t.Errorf("claimSize() = %d while draining", n)
			}
			if len(l.queue) != 0 || len(l.toRelease) != 2 {
				t.Errorf("queue %d, to release %d after startDrain; want 0 and 2", len(l.queue), len(l.toRelease))
			}
			if publishing.state != rowPublishing {
				t.Errorf("a running publish was stopped at the start of the drain")
			}
			// Phase 2 at pubDueAt: the publish is cut off.
			l.advanceDrain(l.pubDueAt.Add(-time.Nanosecond))
			if l.pubCutoff {
				t.Errorf("publishes cut off before pubDueAt")
			}
			l.advanceDrain(l.pubDueAt)
			if !l.pubCutoff || publishing.state != rowReleasing || l.pubCtx.Err() == nil {
				t.Errorf("at pubDueAt: cut off %v, row state %v, publish context %v; want true, releasing, cancelled", l.pubCutoff, publishing.state, l.pubCtx.Err())
			}
			// Phase 3 at relDueAt: a row whose Fail waits is released.
			failed := &trackedRow{state: rowResolved}
			l.rows[outboxdriver.Lease{ID: reliar.NewMessageID()}] = failed
			l.resolved = append(l.resolved, failed)
			l.advanceDrain(l.relDueAt.Add(-time.Nanosecond))
			if l.failReleased || failed.state != rowResolved {
				t.Errorf("unwritten failures released before relDueAt")
			}
			l.advanceDrain(l.relDueAt)
			if !l.failReleased || failed.state != rowReleasing || len(l.resolved) != 0 {
				t.Errorf("at relDueAt: released %v, row state %v, %d resolved; want true, releasing, 0", l.failReleased, failed.state, len(l.resolved))
			}
		})
	}
}

func TestDrainFinished(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		draining bool
		held     int
		busy     string // the kind of store call in flight
		atD      bool
		want     bool
	}{
		{name: "not draining", want: false},
		{name: "nothing held, nothing in flight", draining: true, want: true},
		{name: "a row held", draining: true, held: 1, want: false},
		{name: "a claim in flight", draining: true, busy: "claim", want: false},
		{name: "an outcome write in flight", draining: true, busy: "outcome", want: false},
		{name: "a renewal in flight", draining: true, busy: "renew", want: false},
		{name: "a release in flight", draining: true, busy: "release", want: false},
		{name: "a stats call in flight", draining: true, busy: "stats", want: false},
		{name: "a subscription in flight: not waited for", draining: true, busy: "subscribe", want: true},
		{name: "rows held at D", draining: true, held: 3, busy: "outcome", atD: true, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l := testLoop(t, Settings{})
			holdRows(l, tt.held, rowWriting)
			now := time.Now()
			switch tt.busy {
			case "":
			case l.acq.name:
				l.acq.start(now, time.Second, acquireResult{want: 1})
			case l.write.name:
				l.write.start(now, time.Second, writeResult{})
			case l.renew.name:
				l.renew.start(now, time.Second, renewResult{})
			case l.rel.name:
				l.rel.start(now, time.Second, releaseResult{})
			case l.stats.name:
				l.stats.start(now, time.Second, statsResult{})
			case l.sub.name:
				l.sub.start(now, time.Second, subResult{})
			default:
				t.Fatalf("no store call %q", tt.busy)
			}
			if tt.draining {
				l.startDrain(now)
			}
			at := now
			if tt.atD {
				at = l.drainAt
			}
			if got := l.finished(at); got != tt.want {
				t.Fatalf("finished() = %v, want %v", got, tt.want)
			}
		})
	}
}
