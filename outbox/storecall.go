package outbox

import (
	"context"
	"time"
)

// storeCall is one kind of asynchronous store call the loop makes: the
// claim, the outcome write, the lease renewal, the release, the stats call
// and the wake-up subscription. At most one call of a kind is in flight. The
// call owns all the loop keeps about it, so that a new kind of call is one
// more storeCall (a field of loop, made and listed in newLoop), its result
// type and the function that starts it, and nothing else:
//
//   - whether a call is in flight, and its generation. A result carries the
//     generation of the call that produced it, so the result of a call the
//     watchdog gave up is recognised when it finally comes, and ignored
//     (late);
//   - the watchdog's deadline: the call's budget plus callGrace;
//   - held, what the call in flight holds, as the result it would report
//     without an outcome (the rows asked for, the leases written or
//     released). Giving the call up applies held with the error of a call
//     that did not return (R.withErr), exactly as if the store had failed;
//   - when the next call is due (next), how a result is applied (apply), and
//     what a late result still needs (late: rows a late claim took are
//     released, a late subscription is cancelled).
//
// Every kind reports on the loop's one store channel (loop.storeDone), so
// the loop's select has one case for all of them.
type storeCall[R callResult[R]] struct {
	callState
	l     *loop
	held  R
	apply func(r R, now time.Time) // applies the result of the call in flight
	late  func(r R)                // optional: disposes of the result of a call given up
}

// callState is the part of a storeCall that does not depend on its result
// type, which the loop reads for every kind at once (loop.calls): the
// watchdog and the drain's end read its fields, and only a call overdue
// costs a call through giveUp.
type callState struct {
	name       string // in metrics and logs: "claim", "outcome", …
	what       string // in the error of a call given up: "outcome write", …
	drainWaits bool   // the drain waits for a call in flight (finished)

	gen       uint64
	running   bool
	startedAt time.Time
	giveUpAt  time.Time

	next   func() (time.Time, bool) // when the next call is due; false: none to start (nil: never timed)
	giveUp func(now time.Time)      // gives the call in flight up (storeCall.giveUpNow)
}

// callResult is the result type of a storeCall: withErr is the result of
// the call in flight, as held, failed with err.
type callResult[R any] interface {
	withErr(err error) R
}

// storeReport is the result of one store call on its way to the loop.
type storeReport interface{ land(now time.Time) }

type report[R callResult[R]] struct {
	c   *storeCall[R]
	gen uint64
	r   R
}

func (p report[R]) land(now time.Time) { p.c.land(p.gen, p.r, now) }

// init binds c to l and returns its untyped part, for loop.calls.
func (c *storeCall[R]) init(l *loop) *callState {
	c.l = l
	c.giveUp = c.giveUpNow
	return &c.callState
}

// start records a call started now that may run for budget and holds held,
// and returns its generation, which its goroutine passes to report.
func (c *storeCall[R]) start(now time.Time, budget time.Duration, held R) uint64 {
	c.gen++
	c.running = true
	c.startedAt = now
	c.giveUpAt = now.Add(budget + callGrace(budget))
	c.held = held
	return c.gen
}

// launch starts a call of one store round trip: f runs in a goroutine the
// loop owns, with the context of one store call, and its result is applied
// on the loop.
func (c *storeCall[R]) launch(now time.Time, held R, f func(ctx context.Context) R) {
	gen := c.start(now, c.l.callTimeout(1), held)
	c.l.goStore(func(ctx context.Context) { c.report(gen, f(ctx)) })
}

// report sends the result of the call of generation gen to the loop; it is
// called from the call's goroutine and never blocks once the loop stopped.
func (c *storeCall[R]) report(gen uint64, r R) {
	deliver[storeReport](c.l, c.l.storeDone, report[R]{c: c, gen: gen, r: r})
}

// land applies a result on the loop: the call in flight ends, or the result
// is a late one, of a call given up.
func (c *storeCall[R]) land(gen uint64, r R, now time.Time) {
	if !c.running || gen != c.gen {
		c.l.lateResult(c.name)
		if c.late != nil {
			c.late(r)
		}
		return
	}
	c.end()
	c.apply(r, now)
}

// end marks the call in flight as over.
func (c *storeCall[R]) end() {
	c.running = false
	var zero R
	c.held = zero
}

func (c *callState) busy() bool             { return c.running }
func (c *callState) waitedForByDrain() bool { return c.running && c.drainWaits }
func (c *callState) overdue(now time.Time) bool {
	return c.running && !now.Before(c.giveUpAt)
}

// due is when the next call of the kind is to start; false while one is in
// flight or none is to be started.
func (c *callState) due() (time.Time, bool) {
	if c.running || c.next == nil {
		return time.Time{}, false
	}
	return c.next()
}

// giveUpNow gives up the call in flight, past its deadline plus grace
// (callState.overdue): it is resolved as a failed call, and its result, if
// it ever comes, is late.
func (c *storeCall[R]) giveUpNow(now time.Time) {
	r := c.held.withErr(&notReturnedError{call: c.what, timeout: c.l.s.StoreTimeout})
	c.end()
	c.l.callGivenUp(c.name)
	c.apply(r, now)
}
