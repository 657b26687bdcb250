package relay

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/cmd/reliar/internal/broker"
)

type plainPub struct{}

func (plainPub) Publish(context.Context, *reliar.SerializedEnvelope) error { return nil }

type batchPub struct{ plainPub }

func (batchPub) PublishBatch(_ context.Context, envs []*reliar.SerializedEnvelope) []error {
	return make([]error, len(envs))
}

type dedupPub struct{ plainPub }

func (dedupPub) DedupWindow() time.Duration { return time.Minute }

type batchDedupPub struct{ batchPub }

func (batchDedupPub) DedupWindow() time.Duration { return time.Minute }

// TestWrapKeepsThePublisherInterfaces: the dispatcher finds
// BatchPublisher and DedupWindower on the watched publisher exactly when
// the broker's publisher has them.
func TestWrapKeepsThePublisherInterfaces(t *testing.T) {
	d := newDestinations(&broker.Broker{}, slog.New(slog.DiscardHandler))
	for _, tt := range []struct {
		name         string
		pub          reliar.Publisher
		batch, dedup bool
	}{
		{"plain", plainPub{}, false, false},
		{"batch", batchPub{}, true, false},
		{"dedup", dedupPub{}, false, true},
		{"batch and dedup", batchDedupPub{}, true, true},
	} {
		w := d.wrap(tt.pub)
		_, batch := w.(reliar.BatchPublisher)
		dw, dedup := w.(reliar.DedupWindower)
		if batch != tt.batch || dedup != tt.dedup {
			t.Errorf("%s: wrapped is batch %v, dedup %v; want %v, %v", tt.name, batch, dedup, tt.batch, tt.dedup)
		}
		if dedup && dw.DedupWindow() != time.Minute {
			t.Errorf("%s: DedupWindow = %v", tt.name, dw.DedupWindow())
		}
		if b, ok := w.(reliar.BatchPublisher); ok {
			if errs := b.PublishBatch(t.Context(), []*reliar.SerializedEnvelope{{}, {}}); len(errs) != 2 {
				t.Errorf("%s: PublishBatch returned %d results", tt.name, len(errs))
			}
		}
	}
}
