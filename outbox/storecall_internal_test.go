package outbox

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// recordingCall is a storeCall whose hooks record what they were given.
type recordingCall struct {
	storeCall[releaseResult]
	applied, late []releaseResult
}

func newRecordingCall(l *loop) *recordingCall {
	c := &recordingCall{}
	c.storeCall = storeCall[releaseResult]{
		callState: callState{name: "test", what: "test call", drainWaits: true},
		apply:     func(r releaseResult, _ time.Time) { c.applied = append(c.applied, r) },
		late:      func(r releaseResult) { c.late = append(c.late, r) },
	}
	c.init(l)
	return c
}

func TestStoreCall(t *testing.T) {
	t.Parallel()
	lease := outboxdriver.Lease{ID: reliar.NewMessageID()}
	held := releaseResult{leases: []outboxdriver.Lease{lease}, atDrain: true}
	ok := releaseResult{leases: held.leases, affected: 1}
	const budget = time.Second
	t0 := time.Now()
	deadline := t0.Add(budget + callGrace(budget))

	tests := []struct {
		name string
		run  func(t *testing.T, c *recordingCall)
		// wantApplied and wantLate are the affected counts of the results
		// applied and disposed of as late, in order; -1 is a call given up.
		wantApplied, wantLate []int64
		wantRunning           bool
		wantStuck             int
	}{
		{
			name:        "its result ends the call in flight",
			run:         func(t *testing.T, c *recordingCall) { c.land(c.start(t0, budget, held), ok, t0) },
			wantApplied: []int64{1},
		},
		{
			name: "running until its result lands",
			run: func(t *testing.T, c *recordingCall) {
				c.start(t0, budget, held)
				if c.overdue(deadline.Add(-time.Nanosecond)) {
					c.giveUp(deadline)
				}
			},
			wantRunning: true,
		},
		{
			name: "given up at its deadline plus grace: held applied with the error",
			run: func(t *testing.T, c *recordingCall) {
				c.start(t0, budget, held)
				if c.overdue(deadline) {
					c.giveUp(deadline)
				}
			},
			wantApplied: []int64{-1},
			wantStuck:   1,
		},
		{
			name: "a result after the give-up is late",
			run: func(t *testing.T, c *recordingCall) {
				gen := c.start(t0, budget, held)
				if c.overdue(deadline) {
					c.giveUp(deadline)
				}
				c.land(gen, ok, deadline)
			},
			wantApplied: []int64{-1},
			wantLate:    []int64{1},
		},
		{
			name: "a late result does not end the next call",
			run: func(t *testing.T, c *recordingCall) {
				first := c.start(t0, budget, held)
				if c.overdue(deadline) {
					c.giveUp(deadline)
				}
				second := c.start(deadline, budget, held)
				c.land(first, ok, deadline)
				if !c.running {
					t.Error("the late result ended the call in flight")
				}
				c.land(second, releaseResult{affected: 2}, deadline)
			},
			wantApplied: []int64{-1, 2},
			wantLate:    []int64{1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l := testLoop(t, Settings{})
			c := newRecordingCall(l)
			tt.run(t, c)
			if got := affected(c.applied); !slices.Equal(got, tt.wantApplied) {
				t.Errorf("applied %v, want %v", got, tt.wantApplied)
			}
			if got := affected(c.late); !slices.Equal(got, tt.wantLate) {
				t.Errorf("late %v, want %v", got, tt.wantLate)
			}
			if c.running != tt.wantRunning || c.busy() != tt.wantRunning || c.waitedForByDrain() != tt.wantRunning {
				t.Errorf("running %v, want %v", c.running, tt.wantRunning)
			}
			if l.stuck != tt.wantStuck {
				t.Errorf("stuck calls %d, want %d", l.stuck, tt.wantStuck)
			}
			for _, r := range c.applied {
				if r.err == nil {
					continue
				}
				var nr *notReturnedError
				if !errors.As(r.err, &nr) || nr.call != "test call" || len(r.leases) != 1 || r.leases[0] != lease {
					t.Errorf("a call given up applied %+v; want held's leases and a notReturnedError for %q", r, "test call")
				}
			}
		})
	}
}

// A result is reported on the loop's store channel, and dropped once the
// loop stopped reading.
func TestStoreCallReport(t *testing.T) {
	t.Parallel()
	l := testLoop(t, Settings{})
	c := newRecordingCall(l)
	gen := c.start(time.Now(), time.Second, releaseResult{})
	c.report(gen, releaseResult{affected: 3})
	(<-l.storeDone).land(time.Now())
	if got := affected(c.applied); !slices.Equal(got, []int64{3}) {
		t.Fatalf("applied %v, want [3]", got)
	}
	close(l.quit)
	c.report(gen, releaseResult{}) // returns: nobody reads
	c.report(gen, releaseResult{})
	for range cap(l.storeDone) + 1 {
		c.report(gen, releaseResult{})
	}
}

func affected(rs []releaseResult) []int64 {
	var out []int64
	for _, r := range rs {
		if r.err != nil {
			out = append(out, -1)
			continue
		}
		out = append(out, r.affected)
	}
	return out
}
