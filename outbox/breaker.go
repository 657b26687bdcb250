package outbox

import "github.com/reliar/reliar"

// breaker is the dispatcher's circuit breaker: it opens after threshold
// consecutive transient failures on distinct rows and closes on the first
// success. While open the dispatcher claims only single-row probes and
// releases failed rows without recording an attempt, so a broker outage of
// any length dead-letters nothing.
type breaker struct {
	threshold int
	open      bool
	failing   map[reliar.MessageID]struct{}
}

// failure records a transient failure of row id and reports whether the
// breaker opened because of it.
func (b *breaker) failure(id reliar.MessageID) bool {
	if b.threshold <= 0 || b.open {
		return false
	}
	if b.failing == nil {
		b.failing = make(map[reliar.MessageID]struct{}, b.threshold)
	}
	b.failing[id] = struct{}{}
	if len(b.failing) < b.threshold {
		return false
	}
	b.open = true
	clear(b.failing)
	return true
}

// success records a successful publish and reports whether the breaker
// closed because of it.
func (b *breaker) success() bool {
	clear(b.failing)
	if !b.open {
		return false
	}
	b.open = false
	return true
}
