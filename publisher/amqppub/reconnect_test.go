package amqppub_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/publisher/amqppub"
)

// logBuffer collects a publisher's logs.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *logBuffer) option() amqppub.Option {
	return amqppub.WithLogger(slog.New(slog.NewTextHandler(b, nil)))
}

// publishUntil publishes env until it succeeds, failing the test on a
// permanent error or when it never succeeds. Every failure on the way must
// be transient.
func publishUntil(t *testing.T, p *amqppub.Publisher, env *reliar.SerializedEnvelope) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		err := p.Publish(ctx, env)
		cancel()
		if err == nil {
			return
		}
		if reliar.IsPermanent(err) {
			t.Fatalf("Publish: permanent error while reconnecting: %v", err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("Publish never recovered: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestReconnectAfterConnectionCut cuts the connection under the publisher,
// as a broker restart or a network failure would.
func TestReconnectAfterConnectionCut(t *testing.T) {
	t.Parallel()
	top := newTopology(t, everything)
	px := newProxy(t)
	var logs logBuffer
	p := newPublisher(t, px.url(), amqppub.WithExchange(top.exchange), amqppub.WithReconnectBackoff(10*time.Millisecond, 100*time.Millisecond), logs.option())
	if err := p.Publish(timeout(t), envelope(0, "orders.placed")); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	top.receive(t, 1)

	px.cut()
	env := envelope(1, "orders.placed")
	publishUntil(t, p, env)
	if d := top.receive(t, 1)[0]; d.MessageId != env.ID.String() {
		t.Fatalf("received %s, want %s", d.MessageId, env.ID)
	}
	for _, want := range []string{"amqppub: connection lost", "amqppub: reconnected"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the logs lack %q:\n%s", want, logs.String())
		}
	}
}

// TestUnreachableThenBack makes the broker unreachable: calls fail at once
// with ErrNotConnected, and succeed again once the broker is back.
func TestUnreachableThenBack(t *testing.T) {
	t.Parallel()
	top := newTopology(t, everything)
	px := newProxy(t)
	p := newPublisher(t, px.url(), amqppub.WithExchange(top.exchange), amqppub.WithReconnectBackoff(10*time.Millisecond, 50*time.Millisecond))

	px.stop()
	deadline := time.Now().Add(waitTimeout)
	for {
		start := time.Now()
		err := p.Publish(timeout(t), envelope(0, "orders.placed"))
		if err == nil {
			t.Fatal("Publish succeeded with the broker unreachable")
		}
		if reliar.IsPermanent(err) {
			t.Fatalf("Publish = %v, want a transient error", err)
		}
		if errors.Is(err, amqppub.ErrNotConnected) {
			if d := time.Since(start); d > time.Second {
				t.Errorf("ErrNotConnected took %v", d)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Publish never reported ErrNotConnected: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	errs := p.PublishBatch(timeout(t), batch(3, "orders.placed"))
	for i, err := range errs {
		if !errors.Is(err, amqppub.ErrNotConnected) || reliar.IsPermanent(err) {
			t.Fatalf("batch result %d = %v, want a transient ErrNotConnected", i, err)
		}
	}

	px.start()
	env := envelope(1, "orders.placed")
	publishUntil(t, p, env)
	if d := top.receive(t, 1)[0]; d.MessageId != env.ID.String() {
		t.Fatalf("received %s, want %s", d.MessageId, env.ID)
	}
}

// TestAmbiguousOutcome holds back the broker's confirmation past the
// publish deadline: Publish reports a transient error, and the message is
// delivered all the same — the fourth duplicate window.
func TestAmbiguousOutcome(t *testing.T) {
	t.Parallel()
	top := newTopology(t, everything)
	px := newProxy(t)
	p := newPublisher(t, px.url(), amqppub.WithExchange(top.exchange), amqppub.WithPoolSize(1))
	// Open the pool's channel before pausing.
	if err := p.Publish(timeout(t), envelope(0, "orders.placed")); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	top.receive(t, 1)

	px.pause()
	env := envelope(1, "orders.placed")
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	err := p.Publish(ctx, env)
	if !errors.Is(err, context.DeadlineExceeded) || reliar.IsPermanent(err) {
		t.Fatalf("Publish = %v, want a transient deadline error", err)
	}
	if d := top.receive(t, 1)[0]; d.MessageId != env.ID.String() {
		t.Fatalf("received %s, want %s", d.MessageId, env.ID)
	}
	px.resume()

	// The channel with the abandoned confirmation is not reused.
	next := envelope(2, "orders.placed")
	if err := p.Publish(timeout(t), next); err != nil {
		t.Fatalf("Publish after the resume: %v", err)
	}
	if d := top.receive(t, 1)[0]; d.MessageId != next.ID.String() {
		t.Fatalf("received %s, want %s", d.MessageId, next.ID)
	}
}

// TestCloseWhileReconnecting closes a publisher whose broker is gone: Close
// stops the reconnection loop promptly (goleak checks the goroutine ended).
func TestCloseWhileReconnecting(t *testing.T) {
	t.Parallel()
	top := newTopology(t, everything)
	px := newProxy(t)
	p, err := amqppub.New(timeout(t), px.url(), quiet, amqppub.WithExchange(top.exchange), amqppub.WithReconnectBackoff(time.Second, time.Second))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	px.stop()
	deadline := time.Now().Add(waitTimeout)
	for !errors.Is(p.Publish(timeout(t), envelope(0, "orders.placed")), amqppub.ErrNotConnected) {
		if time.Now().After(deadline) {
			t.Fatal("the publisher never noticed the lost connection")
		}
		time.Sleep(10 * time.Millisecond)
	}
	start := time.Now()
	if err := p.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Fatalf("Close took %v while reconnecting", d)
	}
}

func TestNewUnreachable(t *testing.T) {
	t.Parallel()
	px := newProxy(t)
	px.stop()
	start := time.Now()
	_, err := amqppub.New(timeout(t), px.url(), quiet)
	if err == nil || reliar.IsPermanent(err) {
		t.Fatalf("New = %v, want a transient error", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("New took %v to fail on a closed port", d)
	}
}

// TestNewHonoursContext dials a broker that accepts the connection but
// never answers: New returns by its context's deadline.
func TestNewHonoursContext(t *testing.T) {
	t.Parallel()
	px := newProxy(t)
	px.pause()
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := amqppub.New(ctx, px.url(), quiet)
	if err == nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("New = %v, want a deadline error", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("New took %v past a 300ms deadline", d)
	}
}

// TestOpenChannelHonoursContext holds back the broker's answer to the
// channel opening of a first Publish: Publish returns by its deadline, and
// the channel, once open, serves the next call.
func TestOpenChannelHonoursContext(t *testing.T) {
	t.Parallel()
	top := newTopology(t, everything)
	px := newProxy(t)
	p := newPublisher(t, px.url(), amqppub.WithExchange(top.exchange), amqppub.WithPoolSize(1))

	px.pause()
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := p.Publish(ctx, envelope(1, "orders.placed"))
	if !errors.Is(err, context.DeadlineExceeded) || reliar.IsPermanent(err) {
		t.Fatalf("Publish = %v, want a transient deadline error", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("Publish took %v past a 200ms deadline", d)
	}
	top.expectNothing(t, 100*time.Millisecond)
	px.resume()

	env := envelope(2, "orders.placed")
	if err := p.Publish(timeout(t), env); err != nil {
		t.Fatalf("Publish after the resume: %v", err)
	}
	if d := top.receive(t, 1)[0]; d.MessageId != env.ID.String() {
		t.Fatalf("received %s, want %s", d.MessageId, env.ID)
	}
}
