package promobs_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/observability/promobs"
	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/outbox/memstore"
)

type orderPlaced struct {
	OrderID string `json:"order_id"`
}

func (orderPlaced) MessageType() string { return "orders.placed" }

type orderRefused struct {
	OrderID string `json:"order_id"`
}

func (orderRefused) MessageType() string { return "orders.refused" }

// TestDispatcherFeedsMetrics runs a real dispatcher over the in-memory store:
// one message publishes, one fails permanently and goes dead.
func TestDispatcherFeedsMetrics(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewPedanticRegistry()
	m, err := promobs.New(reg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	store := newMemStore()
	ctx := t.Context()
	if _, err := store.Enqueue(ctx, reliar.NewMsg(orderPlaced{OrderID: "A-1"}), reliar.NewMsg(orderRefused{OrderID: "A-2"})); err != nil {
		t.Fatalf("Enqueue: %v", err)
	}

	var mu sync.Mutex
	calls := 0
	done := make(chan struct{})
	pub := reliar.PublisherFunc(func(ctx context.Context, env *reliar.SerializedEnvelope) error {
		mu.Lock()
		defer mu.Unlock()
		if calls++; calls == 2 {
			close(done)
		}
		if env.MessageType == "orders.refused" {
			return reliar.Permanent(errors.New("broker refused the message"))
		}
		return nil
	})
	d, err := outbox.New(store, pub, outbox.DefaultSettings(), outbox.WithMetrics(m))
	if err != nil {
		t.Fatalf("outbox.New: %v", err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- d.Run(runCtx) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the dispatcher did not publish both messages within 10s")
	}
	cancel()
	if err := <-ran; err != nil {
		t.Fatalf("Run: %v", err)
	}

	checks := []struct {
		family string
		labels map[string]string
		want   float64
	}{
		{"reliar_outbox_claimed_total", nil, 2},
		{"reliar_outbox_published_total", map[string]string{"message_type": "orders.placed"}, 1},
		{"reliar_outbox_publish_failures_total", map[string]string{"message_type": "orders.refused", "kind": "permanent"}, 1},
		{"reliar_outbox_dead_total", map[string]string{"reason": "permanent"}, 1},
		{"reliar_outbox_retried_total", map[string]string{"kind": "transient"}, 0},
	}
	for _, c := range checks {
		if got := value(t, reg, c.family, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.family, c.labels, got, c.want)
		}
	}
	h := sample(t, reg, "reliar_outbox_publish_duration_seconds", map[string]string{"message_type": "orders.refused"}).GetHistogram()
	if h.GetSampleCount() != 1 {
		t.Errorf("publish_duration_seconds{orders.refused} observed %d calls, want 1", h.GetSampleCount())
	}
}

// newMemStore returns an empty memstore.Store; memstore.New fails only on an
// invalid option.
func newMemStore(opts ...memstore.Option) *memstore.Store {
	s, err := memstore.New(opts...)
	if err != nil {
		panic(err)
	}
	return s
}
