package main

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TestRelayBeforeItsStreamExists: a relay that starts before its
// JetStream stream exists (a deploy-order mistake, a stream deleted by
// hand) dead-letters nothing. Every publish fails transiently, the circuit
// breaker opens and /readyz answers 503 saying why; once the operator
// creates the stream, the whole backlog drains, every row published once.
func TestRelayBeforeItsStreamExists(t *testing.T) {
	t.Parallel()
	db := newPG(t)
	db.migrate(t)
	ids := db.insert(t, "order_placed", 50)
	prefix := "relay_late_" + suffix(t)
	p := startRelay(t, append([]string{"--database-url", postgresURL, "--schema", db.schema,
		"--broker", natsURL, "--subject-prefix", prefix}, fastFlags...)...)

	waitFor(t, "the circuit breaker to open", func() bool {
		code, body := p.get(t, "/readyz")
		return code == http.StatusServiceUnavailable && strings.Contains(body, "circuit breaker open")
	})
	if got := p.metric(t, "reliar_outbox_breaker_open"); got != 1 {
		t.Errorf("breaker_open = %v, want 1", got)
	}
	// The breaker probes one row at a time meanwhile; give it a few.
	time.Sleep(time.Second)
	if n := db.count(t, "dead_at IS NOT NULL"); n != 0 {
		t.Fatalf("%d rows dead while the stream was missing, want none", n)
	}
	if n := db.count(t, "published_at IS NOT NULL"); n != 0 {
		t.Fatalf("%d rows published with no stream", n)
	}

	// The operator creates the stream.
	nc, err := nats.Connect(natsURL)
	if err != nil {
		t.Fatalf("nats: %v", err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatalf("jetstream: %v", err)
	}
	s, err := js.CreateStream(t.Context(), jetstream.StreamConfig{Name: prefix, Subjects: []string{prefix + ".>"}, Storage: jetstream.MemoryStorage})
	if err != nil {
		t.Fatalf("create stream: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := js.DeleteStream(ctx, prefix); err != nil {
			t.Errorf("delete stream %s: %v", prefix, err)
		}
	})

	waitFor(t, "the backlog to drain", func() bool { return db.count(t, "published_at IS NOT NULL") == len(ids) })
	if n := db.count(t, "dead_at IS NOT NULL"); n != 0 {
		t.Errorf("%d rows dead, want none", n)
	}
	info, err := s.Info(t.Context())
	if err != nil {
		t.Fatalf("stream info: %v", err)
	}
	if info.State.Msgs != uint64(len(ids)) {
		t.Errorf("the stream holds %d messages, want %d", info.State.Msgs, len(ids))
	}
	p.waitReady(t, http.StatusOK)
}
