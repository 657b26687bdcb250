package outboxtest

import (
	"context"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox"
)

// Drain runs a dispatcher over store and pub, with settings and opts, until
// no due row is left and every outcome is written (the store reports no
// due and no leased row), then stops it and returns the store's final
// Stats. It waits on the dispatcher's own claims and outcome writes, never
// on a timer of its own: after every claim and every outcome write it asks
// the store for its Stats.
//
// Rows that failed and wait for a retry are scheduled, not due: Drain
// returns with them pending (Stats.Scheduled counts them), and dead rows
// count as done. While the circuit breaker is open (BreakerThreshold
// transient failures in a row) the dispatcher probes one row per
// IdlePollInterval, and Drain waits for it. Drain fails t when the dispatcher cannot be created or
// stops with an error, when Stats fails, or when ctx ends first (give it a
// deadline). A WithEvents or WithTracer among opts is replaced by Drain's
// own.
func Drain(ctx context.Context, t TB, store outbox.Store, pub reliar.Publisher, settings outbox.Settings, opts ...outbox.Option) outbox.Stats {
	t.Helper()
	changed := make(chan struct{}, 1)
	poke := func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	opts = append(opts[:len(opts):len(opts)],
		outbox.WithTracer(drainTracer{poke: poke}),
		outbox.WithEvents(outbox.EventSinkFunc(func(outbox.Event) { poke() })))
	d, err := outbox.New(store, pub, settings, opts...)
	if err != nil {
		fail(t, "outboxtest: Drain: %v", err)
		return outbox.Stats{}
	}
	runCtx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- d.Run(runCtx) }()
	st, err := waitDrained(ctx, store, changed, ran)
	stop()
	if runErr := <-ran; runErr != nil && err == nil {
		err = runErr
	}
	if err != nil {
		fail(t, "outboxtest: Drain: %v (last stats: due=%d leased=%d scheduled=%d dead=%d)", err, st.Due, st.Leased, st.Scheduled, st.Dead)
		return st
	}
	return st
}

// waitDrained checks the store's Stats at once and after every change the
// dispatcher reports, until no row is due or leased. It returns early with
// an error when Stats fails, the dispatcher stops or ctx ends; a dispatcher
// that stopped is reported through ran, which it then leaves empty.
func waitDrained(ctx context.Context, store outbox.Store, changed <-chan struct{}, ran chan error) (outbox.Stats, error) {
	var st outbox.Stats
	for {
		cur, err := store.Stats(ctx)
		if err != nil {
			return st, err // the last counts read
		}
		st = cur
		if st.Due == 0 && st.Leased == 0 {
			return st, nil
		}
		select {
		case <-changed:
		case err := <-ran:
			ran <- err // for Drain, which waits for it
			if err == nil {
				err = errDispatcherStopped
			}
			return st, err
		case <-ctx.Done():
			return st, ctx.Err()
		}
	}
}

// drainTracer reports the end of every claim and outcome write, the
// moments the store's counts change, and opens no spans.
type drainTracer struct {
	outbox.NoopTracer
	poke func()
}

type pokeSpan struct{ poke func() }

func (s pokeSpan) End(error) { s.poke() }

func (d drainTracer) StartClaim(ctx context.Context, _ string, _ int) (context.Context, outbox.Span) {
	return ctx, pokeSpan{poke: d.poke}
}

func (d drainTracer) StartOutcomeWrite(ctx context.Context, _ string, _ int) (context.Context, outbox.Span) {
	return ctx, pokeSpan{poke: d.poke}
}
