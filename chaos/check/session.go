package check

import (
	"cmp"
	"slices"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox"
)

// session is one holder's claim of a message, up to the next claim.
type session struct {
	worker    string
	start     time.Time
	reclaimed bool
	// implied marks the unlogged holder a lapsed reclaim proves existed
	// when no claim of it was logged (its process died before writing).
	implied bool

	published       bool
	publishedAt     time.Time
	publishFailed   bool
	publishFailedAt time.Time
	cutOff          bool
	leftToLease     bool
	abandoned       bool
	released        bool
}

// mayHavePublished reports whether the session may have reached the
// broker. Only a release with no publish activity proves it did not: rows
// are released before their publish starts, or when it was cut off.
func (s *session) mayHavePublished() bool {
	return !s.released || s.cutOff || s.published || s.publishFailed
}

// handover is the passage of a message from one session to the next.
type handover struct {
	window Window
	// certain: the earlier session's publish is known to have reached the
	// broker; such hand-overs are credited first.
	certain bool
}

// timeline groups the events by message and remembers when each worker
// last reported anything (its liveness).
type timeline struct {
	byID     map[reliar.MessageID][]outbox.Event
	lastSeen map[string]time.Time
}

func newTimeline(events []outbox.Event) timeline {
	t := timeline{byID: make(map[reliar.MessageID][]outbox.Event), lastSeen: make(map[string]time.Time)}
	for _, e := range events {
		if e.At.After(t.lastSeen[e.Worker]) {
			t.lastSeen[e.Worker] = e.At
		}
		for _, id := range e.IDs {
			t.byID[id] = append(t.byID[id], e)
		}
	}
	for _, evs := range t.byID {
		slices.SortStableFunc(evs, func(a, b outbox.Event) int { return a.At.Compare(b.At) })
	}
	return t
}

// sessions rebuilds a message's sessions from its events.
func (t timeline) sessions(id reliar.MessageID) []*session {
	var all []*session
	open := make(map[string]*session)
	for _, e := range t.byID[id] {
		switch e.Kind {
		case outbox.EventClaimed, outbox.EventReclaimed:
			s := &session{worker: e.Worker, start: e.At, reclaimed: e.Kind == outbox.EventReclaimed}
			if s.reclaimed && len(all) == 0 {
				all = append(all, &session{implied: true, start: e.At})
			}
			all = append(all, s)
			open[e.Worker] = s
			continue
		}
		s := open[e.Worker]
		if s == nil {
			continue // its claim was not logged; nothing to attach to
		}
		switch e.Kind {
		case outbox.EventPublished:
			s.published, s.publishedAt = true, e.At
		case outbox.EventPublishFailed:
			s.publishFailed, s.publishFailedAt = true, e.At
		case outbox.EventDrainCutOff:
			s.cutOff = true
		case outbox.EventLeftToLease:
			s.leftToLease = true
		case outbox.EventAbandoned:
			s.abandoned = true
		case outbox.EventReleased:
			s.released = true
		}
	}
	slices.SortStableFunc(all, func(a, b *session) int { return a.start.Compare(b.start) })
	return all
}

// handovers lists the hand-overs of a message that can explain a
// duplicate attempt, the certain ones first.
func (t timeline) handovers(id reliar.MessageID) []handover {
	ss := t.sessions(id)
	var out []handover
	for i := 0; i+1 < len(ss); i++ {
		prev, next := ss[i], ss[i+1]
		if !prev.mayHavePublished() {
			continue
		}
		h := handover{certain: prev.published}
		switch {
		case next.reclaimed:
			h.window = t.lapseWindow(prev, next)
		case prev.publishFailed:
			h.window = WindowAmbiguous
		case prev.cutOff:
			h.window = WindowDrain
		default:
			continue // released without letting go of a publish
		}
		out = append(out, h)
	}
	slices.SortStableFunc(out, func(a, b handover) int {
		return cmp.Compare(b2i(b.certain), b2i(a.certain))
	})
	return out
}

// lapseWindow names the window of a lapsed reclaim by what the earlier
// holder did before the reclaim: it let the row go at the drain (3); its
// publish had already returned, successfully (1: the completion never
// landed) or not (4); it crashed or abandoned the row (1); or it was still
// alive and publishing when its lease lapsed (2).
func (t timeline) lapseWindow(prev, next *session) Window {
	switch {
	case prev.implied, prev.abandoned:
		return WindowCrash
	case prev.cutOff, prev.leftToLease:
		return WindowDrain
	case prev.published && prev.publishedAt.Before(next.start):
		return WindowCrash
	case prev.publishFailed && prev.publishFailedAt.Before(next.start):
		return WindowAmbiguous
	case t.lastSeen[prev.worker].After(next.start):
		return WindowSlowPublish
	default:
		return WindowCrash
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
