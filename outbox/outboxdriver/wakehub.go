package outboxdriver

import (
	"context"
	"sync"
)

// WakeHub is the bookkeeping of a [Notifier] store's Wakeups: it fans the
// wake-ups of one source (a LISTEN connection, a polling watcher) out to
// every subscriber, and runs that source only while someone subscribes. A
// store embeds one; the zero value is ready. It is safe for concurrent use.
//
// WakeHub is a helper of Reliar's own stores, kept compatible only with the
// store modules of the same release (see the package documentation).
type WakeHub struct {
	mu   sync.Mutex
	subs map[chan struct{}]struct{}
	// stop ends the running source and done is closed once it returned;
	// both nil when none runs.
	stop context.CancelFunc
	done <-chan struct{}
}

// WakeSource starts a store's source of wake-ups: it opens what the source
// needs with ctx, failing when it cannot, then runs the source in a
// goroutine until run ends, calling wake for every wake-up; done is closed
// once that goroutine released everything.
type WakeSource func(ctx, run context.Context, wake func()) (done <-chan struct{}, err error)

// Subscribe implements Notifier.Wakeups for the store: it adds a
// subscriber for ctx's life, starting the source with start when none runs
// (the source then lives as long as it has subscribers, not as long as the
// first one). Signals are coalesced: the channel has a capacity of one. The
// channel is closed, as the last act of the work done for it, once ctx is
// done and — for the last subscriber — the source has stopped, so reading
// until it is closed waits for the source. It returns ctx's error when ctx
// is already done, and start's error.
func (h *WakeHub) Subscribe(ctx context.Context, start WakeSource) (<-chan struct{}, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stop == nil {
		run, stop := context.WithCancel(context.WithoutCancel(ctx))
		done, err := start(ctx, run, h.broadcast)
		if err != nil {
			stop()
			return nil, err
		}
		h.stop, h.done = stop, done
	}
	if h.subs == nil {
		h.subs = make(map[chan struct{}]struct{})
	}
	out := make(chan struct{}, 1)
	h.subs[out] = struct{}{}
	go func() {
		<-ctx.Done()
		h.leave(out)
	}()
	return out, nil
}

// leave removes a subscriber. The last one stops the source and waits for
// it before its channel is closed.
func (h *WakeHub) leave(out chan struct{}) {
	h.mu.Lock()
	delete(h.subs, out)
	var done <-chan struct{}
	if len(h.subs) == 0 && h.stop != nil {
		h.stop()
		done = h.done
		h.stop, h.done = nil, nil
	}
	h.mu.Unlock()
	if done != nil {
		<-done
	}
	close(out)
}

// broadcast wakes every subscriber, coalescing with a pending signal.
func (h *WakeHub) broadcast() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for out := range h.subs {
		select {
		case out <- struct{}{}:
		default: // a signal is already pending
		}
	}
}
