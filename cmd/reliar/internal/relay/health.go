package relay

import (
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/reliar/reliar/cmd/reliar/internal/redact"
	"github.com/reliar/reliar/outbox"
)

// phase is where a relay is in its life.
type phase int

const (
	// starting: waiting for the store (reachable and migrated) and the
	// broker.
	starting phase = iota
	// running: the dispatchers run.
	running
	// draining: a signal arrived; the dispatchers finish what they hold.
	draining
)

// readiness is what /readyz answers from: the phase, why start-up has not
// finished, the last probe of the store and the broker, and the
// dispatchers' own health. It is safe for concurrent use.
type readiness struct {
	mu          sync.Mutex
	phase       phase
	startup     error
	store       error
	broker      error
	dispatchers []*outbox.Dispatcher
	// destinations, when set, says which broker destinations are broken.
	destinations *destinations
}

// waiting records why start-up has not finished yet.
func (r *readiness) waiting(err error) {
	r.mu.Lock()
	r.startup = err
	r.mu.Unlock()
}

// run records that the dispatchers started.
func (r *readiness) run(ds []*outbox.Dispatcher) {
	r.mu.Lock()
	r.phase, r.startup, r.dispatchers = running, nil, ds
	r.mu.Unlock()
}

// drain records that the relay is shutting down.
func (r *readiness) drain() {
	r.mu.Lock()
	r.phase = draining
	r.mu.Unlock()
}

// probed records the last probe of the store and the broker; nil is
// healthy.
func (r *readiness) probed(store, broker error) {
	r.mu.Lock()
	r.store, r.broker = store, broker
	r.mu.Unlock()
}

// problems lists why the relay is not ready, secrets redacted; none means
// ready.
func (r *readiness) problems() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	add := func(format string, args ...any) { out = append(out, redact.String(fmt.Sprintf(format, args...))) }
	switch r.phase {
	case starting:
		if r.startup != nil {
			add("starting: %v", r.startup)
		} else {
			add("starting")
		}
		return out
	case draining:
		add("draining")
	}
	if r.store != nil {
		add("store: %v", r.store)
	}
	if r.broker != nil {
		add("broker: %v", r.broker)
	}
	if r.destinations != nil {
		out = append(out, r.destinations.problems()...)
	}
	for i, d := range r.dispatchers {
		h := d.Health()
		if !h.Running {
			add("dispatcher %d: not running", i)
		}
		if h.BreakerOpen {
			if h.BreakerCause != "" {
				add("dispatcher %d: circuit breaker open: %s", i, h.BreakerCause)
			} else {
				add("dispatcher %d: circuit breaker open", i)
			}
		}
	}
	return out
}

// serveReady answers 200 "ready" when nothing is wrong, else 503 with one
// line per problem.
func (r *readiness) serveReady(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	problems := r.problems()
	if len(problems) == 0 {
		_, _ = fmt.Fprintln(w, "ready")
		return
	}
	w.WriteHeader(http.StatusServiceUnavailable)
	_, _ = fmt.Fprintf(w, "not ready\n%s\n", strings.Join(problems, "\n"))
}

// serveHealth answers 200 while the process runs: liveness only, so that a
// relay waiting for its database is not restarted.
func serveHealth(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = fmt.Fprintln(w, "ok")
}
