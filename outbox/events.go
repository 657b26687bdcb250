package outbox

import (
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// EventKind names something that happened to rows in a dispatcher.
type EventKind string

// The events a dispatcher reports. Together they let a checker attribute
// every duplicate delivery to one of the four duplicate windows.
const (
	// EventClaimed: rows claimed. Reclaimed rows are reported separately.
	EventClaimed EventKind = "claimed"
	// EventReclaimed: a row claimed while still carrying a lapsed lease; its
	// previous holder crashed, hung or lost its lease (windows 1 and 2).
	EventReclaimed EventKind = "reclaimed"
	// EventPublished: the broker acknowledged a publish.
	EventPublished EventKind = "published"
	// EventPublishFailed: a publish returned an error. A transient one may
	// still have reached the broker (window 4).
	EventPublishFailed EventKind = "publish_failed"
	// EventCompleted: the rows' completion was written.
	EventCompleted EventKind = "completed"
	// EventFailed: the rows' failed attempt (retry or dead) was written.
	EventFailed EventKind = "failed"
	// EventOutcomeWriteFailed: an outcome write failed; it will be retried.
	EventOutcomeWriteFailed EventKind = "outcome_write_failed"
	// EventAbandoned: rows whose outcome could not be written for a whole
	// lease, left to their lease (window 1 without a crash).
	EventAbandoned EventKind = "abandoned"
	// EventReleased: rows released without an attempt: at the drain, or
	// while the circuit breaker is open.
	EventReleased EventKind = "released"
	// EventDrainCutOff: publishes still running at the drain's publish
	// deadline; their rows are released (window 3).
	EventDrainCutOff EventKind = "drain_cut_off"
	// EventLeftToLease: rows still held when the drain ended, among them
	// published rows whose completion did not land (window 3).
	EventLeftToLease EventKind = "left_to_lease"
	// EventLeaseShortfall: a renewal extended fewer rows than held (the
	// store reports counts, not which rows).
	EventLeaseShortfall EventKind = "lease_shortfall"
)

// Event is one thing that happened to rows in a dispatcher.
type Event struct {
	Kind   EventKind
	Worker string
	At     time.Time
	IDs    []reliar.MessageID
	// Count is the number of rows for events that do not know which
	// (EventLeaseShortfall); len(IDs) otherwise.
	Count int
	// Err is the error text of failure events.
	Err string
	// PrevClaimedAt is the previous claim's time, for EventReclaimed.
	PrevClaimedAt *time.Time
}

// EventSink receives a dispatcher's events, synchronously from its loop:
// implementations must be quick and must not block. Tests and the chaos
// checker use it; production code rarely needs it (use Metrics).
type EventSink interface {
	Event(e Event)
}

// EventSinkFunc adapts a function to EventSink.
type EventSinkFunc func(e Event)

// Event calls f(e).
func (f EventSinkFunc) Event(e Event) { f(e) }

// emit reports an event when a sink is installed.
func (l *loop) emit(kind EventKind, ids []reliar.MessageID, err error) {
	if l.d.events == nil || len(ids) == 0 {
		return
	}
	e := Event{Kind: kind, Worker: l.worker, At: time.Now(), IDs: ids, Count: len(ids)}
	if err != nil {
		e.Err = err.Error()
	}
	l.d.events.Event(e)
}

func (l *loop) emitted() bool { return l.d.events != nil }

func idsOf(leases []outboxdriver.Lease) []reliar.MessageID {
	ids := make([]reliar.MessageID, len(leases))
	for i, l := range leases {
		ids[i] = l.ID
	}
	return ids
}

func rowIDs(rows []*trackedRow) []reliar.MessageID {
	ids := make([]reliar.MessageID, len(rows))
	for i, r := range rows {
		ids[i] = r.rec.Envelope.ID
	}
	return ids
}
