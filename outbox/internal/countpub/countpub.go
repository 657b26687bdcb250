// Package countpub is the publisher the conformance suites run their
// dispatchers with: it accepts every message and counts the deliveries of
// each id, so that a suite can check that every row was published exactly
// once.
package countpub

import (
	"context"
	"maps"
	"sync"

	"github.com/reliar/reliar"
)

// Publisher accepts everything and counts deliveries per message id. The
// zero value is ready to use.
type Publisher struct {
	mu     sync.Mutex
	counts map[reliar.MessageID]int
}

// Publish counts one delivery of env's id.
func (p *Publisher) Publish(_ context.Context, env *reliar.SerializedEnvelope) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.counts == nil {
		p.counts = make(map[reliar.MessageID]int)
	}
	p.counts[env.ID]++
	return nil
}

// Counts returns a copy of the deliveries counted so far, per id.
func (p *Publisher) Counts() map[reliar.MessageID]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.counts)
}
