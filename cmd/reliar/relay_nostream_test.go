package main

import (
	"context"
	"errors"
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

// warnLine returns the first line of the relay's stderr at level WARN (or
// above) holding every one of parts, or "".
func (p *relayProc) warnLine(parts ...string) string {
	for line := range strings.SplitSeq(p.stderr.String(), "\n") {
		if !strings.Contains(line, "level=WARN") && !strings.Contains(line, "level=ERROR") {
			continue
		}
		all := true
		for _, s := range parts {
			all = all && strings.Contains(line, s)
		}
		if all {
			return line
		}
	}
	return ""
}

// TestRelayOneMessageWithoutStream is the README's relay example on a NATS
// server with no stream for the prefix: one row, far below the breaker's
// threshold. The relay warns at start-up and at the first failed publish,
// naming the subject and the fix; /readyz answers 503 naming the
// destination while /healthz stays 200; once the operator creates the
// stream, /readyz is 200 again and the message is delivered.
func TestRelayOneMessageWithoutStream(t *testing.T) {
	t.Parallel()
	db := newPG(t)
	db.migrate(t)
	db.insert(t, "order_placed", 1)
	prefix := "relay_nostream_" + suffix(t)
	subject := prefix + ".order_placed"
	p := startRelay(t, append([]string{"--database-url", postgresURL, "--schema", db.schema,
		"--broker", natsURL, "--subject-prefix", prefix}, fastFlags...)...)

	waitFor(t, "a warning at start-up that no stream captures the prefix", func() bool {
		return p.warnLine("no JetStream stream captures", prefix+".>", "--create-stream") != ""
	})
	waitFor(t, "a warning naming the subject and the fix", func() bool {
		return p.warnLine("broker destination unusable", subject, "nats stream add") != ""
	})
	waitFor(t, "/readyz to answer 503 naming the destination", func() bool {
		code, body := p.get(t, "/readyz")
		return code == http.StatusServiceUnavailable && strings.Contains(body, subject) && strings.Contains(body, "no JetStream stream captures it")
	})
	if code, _ := p.get(t, "/healthz"); code != http.StatusOK {
		t.Errorf("/healthz answered %d while a destination is broken, want 200", code)
	}
	if n := db.count(t, "dead_at IS NOT NULL OR published_at IS NOT NULL"); n != 0 {
		t.Fatalf("%d rows published or dead with no stream", n)
	}

	js := streamAdmin(t)
	s, err := js.CreateStream(t.Context(), jetstream.StreamConfig{Name: prefix, Subjects: []string{prefix + ".>"}, Storage: jetstream.MemoryStorage})
	if err != nil {
		t.Fatalf("create stream: %v", err)
	}
	deleteStream(t, js, prefix)
	p.waitReady(t, http.StatusOK)
	waitFor(t, "the message to be published", func() bool { return db.count(t, "published_at IS NOT NULL") == 1 })
	info, err := s.Info(t.Context())
	if err != nil {
		t.Fatalf("stream info: %v", err)
	}
	if info.State.Msgs != 1 {
		t.Errorf("the stream holds %d messages, want 1", info.State.Msgs)
	}
}

// TestRelayCreateStream: with --create-stream, the README's example
// delivers as written: the relay creates the stream on "<prefix>.>" and
// says so, and the message arrives.
func TestRelayCreateStream(t *testing.T) {
	t.Parallel()
	db := newPG(t)
	db.migrate(t)
	db.insert(t, "order_placed", 1)
	prefix := "relay_create_" + suffix(t)
	name := strings.ToUpper(prefix)
	js := streamAdmin(t)
	deleteStream(t, js, name)
	p := startRelay(t, append([]string{"--database-url", postgresURL, "--schema", db.schema,
		"--broker", natsURL, "--subject-prefix", prefix, "--create-stream"}, fastFlags...)...)

	waitFor(t, "the message to be published", func() bool { return db.count(t, "published_at IS NOT NULL") == 1 })
	s, err := js.Stream(t.Context(), name)
	if err != nil {
		t.Fatalf("the stream %s the relay was to create: %v", name, err)
	}
	info, err := s.Info(t.Context())
	if err != nil {
		t.Fatalf("stream info: %v", err)
	}
	if info.State.Msgs != 1 || len(info.Config.Subjects) != 1 || info.Config.Subjects[0] != prefix+".>" {
		t.Errorf("stream %s holds %d messages on %v, want 1 on %s.>", name, info.State.Msgs, info.Config.Subjects, prefix)
	}
	if p.warnLine("created a JetStream stream", name) == "" {
		t.Errorf("no warning that the relay created stream %s", name)
	}
	p.waitReady(t, http.StatusOK)
}

// streamAdmin connects to the test server's JetStream.
func streamAdmin(t *testing.T) jetstream.JetStream {
	t.Helper()
	nc, err := nats.Connect(natsURL)
	if err != nil {
		t.Fatalf("nats: %v", err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatalf("jetstream: %v", err)
	}
	return js
}

// deleteStream deletes the stream name when the test ends, if it exists.
func deleteStream(t *testing.T, js jetstream.JetStream, name string) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := js.DeleteStream(ctx, name); err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
			t.Errorf("delete stream %s: %v", name, err)
		}
	})
}
