package outbox

import (
	"context"
	"time"

	"github.com/reliar/reliar/outbox/outboxdriver"
)

// Wake-ups: a store that is a Notifier signals committed enqueues, and the
// dispatcher claims at once instead of waiting for its next poll. The
// subscription is made from the loop like any store call: bounded by Run's
// context and by StoreTimeout (given up when the store ignores both),
// retried with backoff when it fails or when the store closes the channel,
// and logged at warn once per outage. Until it works the dispatcher polls.

type subResult struct {
	gen    uint64
	ch     <-chan struct{}
	err    error
	ctx    context.Context // the subscription's, which ends with cancel
	cancel context.CancelFunc
}

// Backoff between subscription attempts.
const (
	subBackoffMin = time.Second
	subBackoffMax = time.Minute
)

// subscribing reports whether a subscription attempt is to be made.
func (l *loop) subscribing() bool {
	if l.wake != nil || l.sub.running || l.draining || !l.d.wakeups || !l.d.store.Capabilities().Notify {
		return false
	}
	_, ok := l.d.store.(outboxdriver.Notifier)
	return ok
}

func (l *loop) maybeSubscribe(now time.Time) {
	if !l.subscribing() || now.Before(l.nextSub) {
		return
	}
	n := l.d.store.(outboxdriver.Notifier)
	ctx, cancel := context.WithCancel(l.wakeCtx)
	l.subCancel = cancel
	gen := l.sub.start(now, l.s.StoreTimeout)
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		ch, err := n.Wakeups(ctx)
		deliver(l, l.subCh, subResult{gen: gen, ch: ch, err: err, ctx: ctx, cancel: cancel})
	}()
}

func (l *loop) onSubscribed(r subResult, now time.Time) {
	if !l.sub.finish(r.gen) {
		// Given up earlier; its context is cancelled, so a channel it
		// returned closes on its own.
		r.cancel()
		l.lateResult(l.sub.name)
		return
	}
	l.subscribed(r, now)
}

// subscribed applies the result of the subscription attempt in flight.
func (l *loop) subscribed(r subResult, now time.Time) {
	if r.err != nil || r.ch == nil {
		if r.cancel != nil {
			r.cancel()
		}
		if l.wakeCtx.Err() != nil {
			return // Run is ending
		}
		l.subBackoff = min(max(2*l.subBackoff, subBackoffMin), subBackoffMax)
		l.nextSub = now.Add(l.subBackoff)
		if !l.subWarned {
			l.subWarned = true
			l.log.Warn("store wake-ups unavailable; polling until a subscription works", "error", r.err, "retry_in", l.subBackoff)
		} else {
			l.log.Debug("store wake-ups still unavailable", "error", r.err, "retry_in", l.subBackoff)
		}
		return
	}
	if l.subWarned {
		l.log.Info("store wake-ups work again")
	}
	l.subWarned = false
	l.subBackoff = 0
	l.wake = r.ch
	l.subscribeHandoff(r.ctx)
}

// onWakeupsClosed notes that the store closed the wake-up channel: poll,
// and subscribe again after a backoff.
func (l *loop) onWakeupsClosed(now time.Time) {
	l.wake = nil
	l.subCancel()
	// The hand-offs ended with the subscription: hold what the store
	// handed over before it closed their channel.
	if ch := l.handoffCh; ch != nil {
		l.handoffCh = nil
		for h := range ch {
			l.onHandoff(h, now)
		}
	}
	if l.wakeCtx.Err() != nil || l.draining {
		return
	}
	l.subBackoff = min(max(2*l.subBackoff, subBackoffMin), subBackoffMax)
	l.nextSub = now.Add(l.subBackoff)
	if !l.subWarned {
		l.subWarned = true
		l.log.Warn("store wake-ups stopped; polling, and subscribing again", "retry_in", l.subBackoff)
	}
}
