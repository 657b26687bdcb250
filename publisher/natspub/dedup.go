package natspub

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/reliar/reliar"
)

var _ reliar.DedupWindower = (*Publisher)(nil)

// DedupWindow returns the stream Duplicates window declared with
// WithDedupWindow: within it JetStream drops a second message with the same
// Nats-Msg-Id (the message id).
func (p *Publisher) DedupWindow() time.Duration { return p.opts.dedupWindow }

// DedupWindowOf reads a stream's Duplicates window, to pass to
// WithDedupWindow.
func DedupWindowOf(ctx context.Context, js jetstream.JetStream, stream string) (time.Duration, error) {
	s, err := js.Stream(ctx, stream)
	if err != nil {
		return 0, fmt.Errorf("natspub: stream %q: %w", stream, err)
	}
	return s.CachedInfo().Config.Duplicates, nil
}
