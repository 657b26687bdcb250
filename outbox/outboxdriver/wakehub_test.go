package outboxdriver_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/reliar/reliar/outbox/outboxdriver"
)

// fakeSource is a WakeSource whose wake-ups the test sends.
type fakeSource struct {
	starts  atomic.Int32
	running atomic.Bool
	wake    chan func()
	fail    error
}

func (f *fakeSource) start(ctx, run context.Context, wake func()) (<-chan struct{}, error) {
	if f.fail != nil {
		return nil, f.fail
	}
	f.starts.Add(1)
	f.running.Store(true)
	done := make(chan struct{})
	go func() {
		defer close(done)
		<-run.Done()
		f.running.Store(false)
	}()
	f.wake <- wake
	return done, nil
}

func TestWakeHubSharesOneSource(t *testing.T) {
	var h outboxdriver.WakeHub
	src := &fakeSource{wake: make(chan func(), 2)}
	ctx1, cancel1 := context.WithCancel(t.Context())
	ctx2, cancel2 := context.WithCancel(t.Context())
	a, err := h.Subscribe(ctx1, src.start)
	if err != nil {
		t.Fatal(err)
	}
	b, err := h.Subscribe(ctx2, src.start)
	if err != nil {
		t.Fatal(err)
	}
	if n := src.starts.Load(); n != 1 {
		t.Fatalf("source started %d times for two subscribers, want 1", n)
	}
	wake := <-src.wake
	wake()
	wake() // coalesced with the pending signal
	for name, ch := range map[string]<-chan struct{}{"a": a, "b": b} {
		<-ch
		select {
		case <-ch:
			t.Fatalf("%s: two signals pending, want them coalesced", name)
		default:
		}
	}

	// The first subscriber leaves: the source keeps running for the other.
	cancel1()
	for range a {
	}
	if !src.running.Load() {
		t.Fatal("the source stopped while a subscriber remained")
	}
	// The last one leaves: its channel is closed only once the source has
	// stopped.
	cancel2()
	for range b {
	}
	if src.running.Load() {
		t.Fatal("the last subscriber's channel closed before the source stopped")
	}

	// The next subscriber starts a new source.
	ctx3, cancel3 := context.WithCancel(t.Context())
	defer cancel3()
	if _, err := h.Subscribe(ctx3, src.start); err != nil {
		t.Fatal(err)
	}
	<-src.wake
	if n := src.starts.Load(); n != 2 {
		t.Fatalf("source started %d times, want 2", n)
	}
}

func TestWakeHubRefuses(t *testing.T) {
	var h outboxdriver.WakeHub
	boom := errors.New("cannot listen")
	if _, err := h.Subscribe(t.Context(), (&fakeSource{fail: boom}).start); !errors.Is(err, boom) {
		t.Fatalf("Subscribe with a failing source = %v, want %v", err, boom)
	}
	done, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := h.Subscribe(done, (&fakeSource{wake: make(chan func(), 1)}).start); !errors.Is(err, context.Canceled) {
		t.Fatalf("Subscribe with a done ctx = %v, want context.Canceled", err)
	}
	// A failed start leaves nothing running: the next one starts afresh.
	src := &fakeSource{wake: make(chan func(), 1)}
	ctx, stop := context.WithCancel(t.Context())
	ch, err := h.Subscribe(ctx, src.start)
	if err != nil || src.starts.Load() != 1 {
		t.Fatalf("Subscribe after a failed start = %v, %d starts", err, src.starts.Load())
	}
	stop()
	for range ch {
	}
}
