package check

import (
	"errors"
	"fmt"
	"strings"

	"github.com/reliar/reliar"
)

// Window is one of the dispatcher's four duplicate windows.
type Window int

// The duplicate windows, numbered as in the dispatcher's documentation.
const (
	// WindowCrash: a crash, or an outcome write failing past one lease,
	// between publish and Complete.
	WindowCrash Window = 1
	// WindowSlowPublish: a lease that expired while a slow worker still
	// published.
	WindowSlowPublish Window = 2
	// WindowDrain: the drain deadline at shutdown.
	WindowDrain Window = 3
	// WindowAmbiguous: an ambiguous publish outcome, retried.
	WindowAmbiguous Window = 4
)

// ErrViolation is wrapped by the error Report.Err returns.
var ErrViolation = errors.New("chaos: delivery guarantee violated")

// maxListed bounds the ids a report lists for each kind of violation.
const maxListed = 10

// Report is the verdict on one run.
type Report struct {
	Committed int
	// Delivered counts committed messages seen at least once at the sink.
	Delivered int
	// Attempts counts every publish the sink saw.
	Attempts int
	// Lost counts committed messages neither seen at the sink nor dead.
	Lost    int
	LostIDs []reliar.MessageID
	// Unknown counts attempts of messages never committed (a rolled-back
	// message must never be published).
	Unknown int
	// Duplicates counts attempts beyond the first of each message.
	Duplicates int
	// ByWindow counts the attributed duplicates per window (index 1–4).
	ByWindow [5]int
	// Unattributed counts duplicates no window explains.
	Unattributed    int
	UnattributedIDs []reliar.MessageID
	// OrderViolations counts messages first seen before a message of the
	// same key with a smaller sequence (only when Input.Ordered).
	OrderViolations int
	OrderIDs        []reliar.MessageID
	// LeasedLeft and PendingLeft come from Final; Dead counts dead rows.
	LeasedLeft  int
	PendingLeft int
	Dead        int
}

// Err returns nil when the run kept the guarantee, else an error wrapping
// ErrViolation that lists what broke. Dead rows are not a violation here:
// a scenario that expects none checks Dead itself.
func (r Report) Err() error {
	var bad []string
	if r.Lost > 0 {
		bad = append(bad, fmt.Sprintf("lost=%d %v", r.Lost, r.LostIDs))
	}
	if r.Unknown > 0 {
		bad = append(bad, fmt.Sprintf("published but never committed=%d", r.Unknown))
	}
	if r.Unattributed > 0 {
		bad = append(bad, fmt.Sprintf("unattributed_duplicates=%d %v", r.Unattributed, r.UnattributedIDs))
	}
	if r.OrderViolations > 0 {
		bad = append(bad, fmt.Sprintf("order_violations=%d %v", r.OrderViolations, r.OrderIDs))
	}
	if r.LeasedLeft > 0 {
		bad = append(bad, fmt.Sprintf("leased_left=%d", r.LeasedLeft))
	}
	if r.PendingLeft > 0 {
		bad = append(bad, fmt.Sprintf("pending_left=%d", r.PendingLeft))
	}
	if len(bad) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrViolation, strings.Join(bad, "; "))
}

// String summarises the report on one line.
func (r Report) String() string {
	return fmt.Sprintf("committed=%d delivered=%d attempts=%d lost=%d duplicates=%d (w1=%d w2=%d w3=%d w4=%d) unattributed=%d order_violations=%d leased_left=%d pending_left=%d dead=%d unknown=%d",
		r.Committed, r.Delivered, r.Attempts, r.Lost, r.Duplicates,
		r.ByWindow[WindowCrash], r.ByWindow[WindowSlowPublish], r.ByWindow[WindowDrain], r.ByWindow[WindowAmbiguous],
		r.Unattributed, r.OrderViolations, r.LeasedLeft, r.PendingLeft, r.Dead, r.Unknown)
}

func appendCapped(ids []reliar.MessageID, id reliar.MessageID) []reliar.MessageID {
	if len(ids) < maxListed {
		ids = append(ids, id)
	}
	return ids
}
