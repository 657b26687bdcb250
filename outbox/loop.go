package outbox

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// rowState is where a claimed row is in the dispatcher.
type rowState int

const (
	rowQueued     rowState = iota // claimed, publish not started
	rowPublishing                 // publish call running
	rowResolved                   // outcome decided, waiting to be written
	rowWriting                    // outcome write in flight
	rowReleasing                  // release in flight
)

// trackedRow is one row the dispatcher holds. Only the loop goroutine reads
// or writes it; publish goroutines get the envelope and the lease by value.
type trackedRow struct {
	rec        outboxdriver.Record
	state      rowState
	ok         bool                       // the publish succeeded
	fail       outboxdriver.FailedOutcome // the outcome to write when !ok
	kind       reliar.FailureKind
	resolvedAt time.Time
	probe      bool   // claimed by a circuit-breaker probe
	call       uint64 // the publish call the row is or was in
}

// loop is the state of one Run. One goroutine (run) owns every field; store
// calls and publishes run in goroutines of their own and report back on the
// buffered channels, so the loop never blocks on I/O.
type loop struct {
	d      *Dispatcher
	s      Settings
	worker string
	log    *slog.Logger

	rows       map[outboxdriver.Lease]*trackedRow // every row held: the outstanding set
	queue      []*trackedRow                      // rowQueued, in claim order
	publishing int                                // rows in rowPublishing
	resolved   []*trackedRow                      // rowResolved, waiting for a write
	toRelease  []*trackedRow                      // rows to release, not yet sent

	woke        bool // a wake-up arrived during the claim in flight
	noWrites    bool // an outcome write failed permanently
	nextClaim   time.Time
	claimAfter  *outboxdriver.Position // the last row of the last full claim; nil: claim from the head
	headClaimAt time.Time              // when the last claim from the head was sent
	nextWrite   time.Time
	nextRenew   time.Time
	nextStats   time.Time
	breaker     breaker
	draining    bool
	pubCutoff   bool
	drainAt     time.Time // D: the end of the drain
	pubDueAt    time.Time // publishes still running then are cut off
	exitErr     error
	storeCtx    context.Context // WithoutCancel(Run's ctx): store calls outlive cancellation
	pubCtx      context.Context // cancelled at the publish cut-off
	cancelPub   context.CancelFunc
	wg          sync.WaitGroup
	wake        <-chan struct{}
	published   *resultQueue[publishResult]
	renewEvery  time.Duration

	// The store calls (storecall.go), one of each kind in flight at most;
	// calls lists them all, in the order the watchdog gives them up, and
	// storeDone carries every result back.
	acq       storeCall[acquireResult]
	write     storeCall[writeResult]
	renew     storeCall[renewResult]
	rel       storeCall[releaseResult]
	stats     storeCall[statsResult]
	sub       storeCall[subResult]
	calls     []*callState
	storeDone chan storeReport

	// Fairness: the tenant the next claim starts after, and, when
	// MaxInFlightPerTenant caps them, the rows held per tenant.
	tenantCursor string
	tenantHeld   map[string]int
	capHeldBack  bool // the last claim may have passed capped tenants over
	writePace    time.Duration

	// The watchdog (watchdog.go): the publish calls' deadlines, and the
	// calls given up whose goroutines still run.
	pubSeq     uint64
	pubWatches []pubWatch
	givenUp    map[uint64]struct{} // publish calls given up, not yet returned
	stuck      int
	quit       chan struct{} // closed when the loop stops reading results

	// Wake-up subscription (subscribe.go).
	wakeCtx    context.Context
	subCancel  context.CancelFunc
	nextSub    time.Time
	subBackoff time.Duration
	subWarned  bool

	failReleased bool      // failed rows with unwritten outcomes released at the drain
	relDueAt     time.Time // when they are

	// The zero-claim path (handoff.go).
	ho        handoffState
	handoffCh <-chan outboxdriver.HandedOver
}

func newLoop(d *Dispatcher, worker string) *loop {
	s := d.settings
	l := &loop{
		d:          d,
		s:          s,
		worker:     worker,
		log:        d.log.With("worker", worker),
		rows:       make(map[outboxdriver.Lease]*trackedRow, s.MaxInFlight),
		breaker:    breaker{threshold: s.BreakerThreshold},
		published:  newResultQueue[publishResult](),
		renewEvery: max(s.Lease/2, time.Millisecond),
		writePace:  max(min(s.PollInterval, s.Lease/4), time.Millisecond),
		givenUp:    map[uint64]struct{}{},
		quit:       make(chan struct{}),
		subCancel:  func() {},
	}
	l.ho.max = int64(s.MaxInFlight)
	l.acq = storeCall[acquireResult]{callState: callState{name: "claim", what: "claim", drainWaits: true, next: l.claimDue}, apply: l.acquired, late: l.releaseLate}
	l.write = storeCall[writeResult]{callState: callState{name: "outcome", what: "outcome write", drainWaits: true, next: l.writeDue}, apply: l.written}
	l.renew = storeCall[renewResult]{callState: callState{name: "renew", what: "lease renewal", drainWaits: true, next: l.renewDue}, apply: l.renewed}
	l.rel = storeCall[releaseResult]{callState: callState{name: "release", what: "release", drainWaits: true}, apply: l.released}
	l.stats = storeCall[statsResult]{callState: callState{name: "stats", what: "stats", drainWaits: true, next: l.statsDue}, apply: l.statted}
	// The subscription ends with Run's context, which the drain starts
	// with: the drain does not wait for it.
	l.sub = storeCall[subResult]{callState: callState{name: "subscribe", what: "wake-up subscription", next: l.subDue}, apply: l.subscribed, late: func(r subResult) { r.cancel() }}
	l.calls = []*callState{l.acq.init(l), l.write.init(l), l.renew.init(l), l.rel.init(l), l.stats.init(l), l.sub.init(l)}
	// Room for the result of every kind: a call's goroutine never waits
	// for the loop to read the result of another.
	l.storeDone = make(chan storeReport, len(l.calls))
	return l
}

func (l *loop) run(ctx context.Context) error {
	l.storeCtx = context.WithoutCancel(ctx)
	l.pubCtx, l.cancelPub = context.WithCancel(l.storeCtx)
	defer l.cancelPub()
	// Wake-ups serve claims only, which end with cancellation: the
	// subscription is bounded by Run's own context.
	var stopWake context.CancelFunc
	l.wakeCtx, stopWake = context.WithCancel(ctx)
	defer stopWake()

	now := time.Now()
	l.nextClaim = now
	l.nextRenew = now.Add(l.renewEvery)
	l.nextStats = now.Add(l.s.StatsInterval)
	l.log.Info("dispatcher starting", "batch_size", l.s.BatchSize, "max_in_flight", l.s.MaxInFlight, "ordering", l.s.Ordering.String())

	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	done := ctx.Done()
	for {
		now = time.Now()
		l.act(now)
		if l.finished(now) {
			break
		}
		timer.Reset(l.nextDeadline(now).Sub(now))
		select {
		case <-done:
			done = nil
			l.startDrain(time.Now())
		case r := <-l.storeDone:
			r.land(time.Now())
		case <-l.published.ready:
			// Every result waiting, so that their outcomes share one
			// write.
			now := time.Now()
			for _, r := range l.published.take() {
				l.onPublished(r, now)
			}
		case h, ok := <-l.handoffCh:
			if !ok {
				l.handoffCh = nil
				continue
			}
			l.onHandoff(h, time.Now())
		case _, ok := <-l.wake:
			if !ok {
				l.onWakeupsClosed(time.Now())
				continue
			}
			l.onWake(time.Now())
		case <-timer.C:
		}
	}
	stopWake()
	l.endHandoff()
	close(l.quit)
	l.finish()
	l.log.Info("dispatcher stopped")
	return l.exitErr
}

// act starts every piece of work that is due.
func (l *loop) act(now time.Time) {
	defer l.syncHandoff()
	l.giveUpOverdue(now)
	l.advanceDrain(now)
	l.maybeSubscribe(now)
	l.maybeClaim(now)
	l.startPublishes(now)
	l.maybeWrite(now)
	l.maybeRelease(now)
	l.maybeRenew(now)
	l.maybeStats(now)
}

// nextDeadline is the earliest moment at which act has something to do
// that no channel will announce.
func (l *loop) nextDeadline(now time.Time) time.Time {
	var t time.Time
	consider := func(x time.Time) {
		if t.IsZero() || x.Before(t) {
			t = x
		}
	}
	for _, c := range l.calls {
		if at, ok := c.due(); ok {
			consider(at)
		}
	}
	if l.draining {
		if !l.pubCutoff {
			consider(l.pubDueAt)
		}
		if !l.failReleased {
			consider(l.relDueAt)
		}
		consider(l.drainAt)
	}
	if l.ho.reserved.Load() > 0 {
		// Reservations of rows leased at enqueue end without a signal
		// (HandoffReserveFor): look again, the room may be back.
		consider(now.Add(outboxdriver.HandoffReserveFor))
	}
	if g := l.nextGiveUp(); !g.IsZero() {
		consider(g)
	}
	if t.IsZero() {
		t = now.Add(l.s.IdlePollInterval)
	}
	return t
}

// fail records a permanent store error and starts the drain; the first
// such error is the one Run returns.
func (l *loop) fail(err error, now time.Time) {
	if l.exitErr == nil {
		l.exitErr = err
		l.log.Error("permanent store error; draining and stopping", "error", err)
	}
	if !l.draining {
		l.startDrain(now)
	}
}

// callBudget bounds store calls: StoreTimeout each, and never past the
// drain's end. It is a value, so goroutines can use it without sharing the
// loop's state.
type callBudget struct {
	base    context.Context
	timeout time.Duration
	until   time.Time // zero when not draining
}

func (l *loop) budget() callBudget {
	b := callBudget{base: l.storeCtx, timeout: l.s.StoreTimeout}
	if l.draining {
		b.until = l.drainAt
	}
	return b
}

// context returns the context for one store call started now.
func (b callBudget) context() (context.Context, context.CancelFunc) {
	timeout := b.timeout
	if !b.until.IsZero() {
		timeout = min(timeout, time.Until(b.until))
	}
	return context.WithTimeout(b.base, timeout)
}

// callTimeout is how long a goroutine making calls store calls one after
// the other may take, as the budget bounds them.
func (l *loop) callTimeout(calls int) time.Duration {
	d := time.Duration(max(calls, 1)) * l.s.StoreTimeout
	if l.draining {
		d = min(d, max(time.Until(l.drainAt), 0))
	}
	return d
}

// deliver sends a call's result to the loop, or drops it once the loop has
// stopped reading: a goroutine never blocks for ever on its report.
func deliver[T any](l *loop, ch chan<- T, v T) {
	select {
	case ch <- v:
	case <-l.quit:
	}
}

// goStore runs f in a goroutine owned by the loop, with the context of one
// store call.
func (l *loop) goStore(f func(ctx context.Context)) {
	ctx, cancel := l.budget().context()
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		defer cancel()
		f(ctx)
	}()
}
