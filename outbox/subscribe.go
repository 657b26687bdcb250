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
	ch     <-chan struct{}
	err    error
	ctx    context.Context // the subscription's, which ends with cancel
	cancel context.CancelFunc
}

// withErr keeps cancel: a subscription given up is cancelled, so that a
// channel it may still return closes on its own.
func (r subResult) withErr(err error) subResult { return subResult{err: err, cancel: r.cancel} }

// Backoff between subscription attempts.
const (
	subBackoffMin = time.Second
	subBackoffMax = time.Minute
)

// subDue is when the next subscription attempt is due, if one is to be
// made.
func (l *loop) subDue() (time.Time, bool) { return l.nextSub, l.subscribing() }

// subscribing reports whether a subscription attempt is to be made.
func (l *loop) subscribing() bool {
	if l.wake != nil || l.draining || !l.d.wakeups || !l.d.store.Capabilities().Notify {
		return false
	}
	_, ok := l.d.store.(outboxdriver.Notifier)
	return ok
}

func (l *loop) maybeSubscribe(now time.Time) {
	if at, ok := l.sub.due(); !ok || now.Before(at) {
		return
	}
	n := l.d.store.(outboxdriver.Notifier)
	ctx, cancel := context.WithCancel(l.wakeCtx)
	l.subCancel = cancel
	// Bounded by StoreTimeout alone: the context is Run's, not a store
	// call's budget.
	gen := l.sub.start(now, l.s.StoreTimeout, subResult{ctx: ctx, cancel: cancel})
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		ch, err := n.Wakeups(ctx)
		l.sub.report(gen, subResult{ch: ch, err: err, ctx: ctx, cancel: cancel})
	}()
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
