package demo

import (
	"errors"
	"log/slog"

	"github.com/reliar/reliar"
)

// newPublisher returns the JetStream publisher of the demo's stream.
func newPublisher(b *broker, log *slog.Logger) (reliar.Publisher, error) {
	return nil, errors.New("demo: the NATS publisher is not available yet")
}
