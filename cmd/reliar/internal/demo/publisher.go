package demo

import (
	"fmt"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/publisher/natspub"
)

// newPublisher returns the JetStream publisher of the demo's stream: a
// batch publisher on the broker's connection, publishing every message on
// "<the demo's subject>.<message type>".
func newPublisher(b *broker) (reliar.Publisher, error) {
	p, err := natspub.New(b.js, natspub.WithSubjectPrefix(b.subject))
	if err != nil {
		return nil, fmt.Errorf("demo: NATS publisher: %w", err)
	}
	return p, nil
}
