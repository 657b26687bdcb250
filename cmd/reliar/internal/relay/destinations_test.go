package relay

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
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

// TestDestinationsReadinessRule: a destination whose stream is missing
// makes the relay not ready, naming it, while no publish succeeded within
// usableWindow; a success elsewhere makes it ready (another destination
// has rows and works) until the window passes; once the stream exists,
// the recheck clears it.
func TestDestinationsReadinessRule(t *testing.T) {
	prefix := randomName("relay_dest_")
	loc, err := broker.Parse(natsURL, broker.Options{SubjectPrefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	b, err := loc.Open(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = b.Close() }()
	var logs bytes.Buffer
	d := newDestinations(b, slog.New(slog.NewTextHandler(&logs, nil)))
	now := time.Now()
	d.now = func() time.Time { return now }
	pub := d.wrap(b.Publisher)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()

	broken := &reliar.SerializedEnvelope{ID: reliar.NewMessageID(), MessageType: "order_placed", ContentType: "application/json", Payload: []byte(`{}`)}
	if err := pub.Publish(ctx, broken); err == nil {
		t.Fatal("a publish with no stream succeeded")
	}
	p := d.problems()
	if len(p) != 1 || !strings.Contains(p[0], prefix+".order_placed") || !strings.Contains(p[0], "no JetStream stream") {
		t.Fatalf("problems %q, want the subject and what is missing", p)
	}
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "broker destination unusable") {
		t.Fatalf("no warning:\n%s", logs.String())
	}
	_ = pub.Publish(ctx, broken)
	if n := strings.Count(logs.String(), "broker destination unusable"); n != 1 {
		t.Errorf("%d warnings for one destination, want 1", n)
	}

	d.succeeded(&reliar.SerializedEnvelope{MessageType: "other"})
	if p := d.problems(); len(p) != 0 {
		t.Errorf("problems %q right after another destination published, want none", p)
	}
	now = now.Add(usableWindow + time.Second)
	if p := d.problems(); len(p) != 1 {
		t.Errorf("problems %q a window after the last success, want the broken destination", p)
	}

	newStream(t, prefix)
	d.recheck(ctx)
	if p := d.problems(); len(p) != 0 {
		t.Errorf("problems %q after the stream was created, want none", p)
	}
	if err := pub.Publish(ctx, broken); err != nil {
		t.Fatalf("publish once the stream exists: %v", err)
	}
}
