package relay

import (
	"sync"

	"github.com/reliar/reliar/outbox"
)

// breakers folds the circuit-breaker states of several dispatchers into the
// one breaker_open gauge they share: open while any of them is open.
type breakers struct {
	mu     sync.Mutex
	open   []bool
	report func(open bool)
}

func newBreakers(n int, report func(open bool)) *breakers {
	return &breakers{open: make([]bool, n), report: report}
}

func (b *breakers) set(i int, open bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.open[i] = open
	anyOpen := false
	for _, o := range b.open {
		anyOpen = anyOpen || o
	}
	b.report(anyOpen)
}

// dispatcherMetrics is the metrics of dispatcher i: the shared ones, except
// that its breaker state goes through breakers.
type dispatcherMetrics struct {
	outbox.Metrics
	breakers *breakers
	i        int
}

// BreakerOpen records dispatcher i's breaker state.
func (m dispatcherMetrics) BreakerOpen(open bool) { m.breakers.set(m.i, open) }
