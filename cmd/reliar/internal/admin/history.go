package admin

import (
	"context"
	"sync"
	"time"
)

// sample is one reading of the gauges the chart draws.
type sample struct {
	// At is the store's clock when the counts were taken.
	At      time.Time
	Pending int64
	Due     int64
	Dead    int64
	// Published is the number of rows published since the previous
	// sample, when HasPublished: the store counted them (Config.Published).
	Published    int64
	HasPublished bool
}

// history is a ring buffer of the latest samples.
type history struct {
	mu   sync.Mutex
	buf  []sample
	next int
	n    int
}

func newHistory(capacity int) *history {
	return &history{buf: make([]sample, max(capacity, 2))}
}

// add records a sample, overwriting the oldest when full.
func (h *history) add(s sample) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.buf[h.next] = s
	h.next = (h.next + 1) % len(h.buf)
	h.n = min(h.n+1, len(h.buf))
}

// since returns the samples taken at or after t, oldest first.
func (h *history) since(t time.Time) []sample {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]sample, 0, h.n)
	for i := range h.n {
		s := h.buf[(h.next-h.n+i+len(h.buf))%len(h.buf)]
		if !s.At.Before(t) {
			out = append(out, s)
		}
	}
	return out
}

// latest returns the newest sample.
func (h *history) latest() (sample, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.n == 0 {
		return sample{}, false
	}
	return h.buf[(h.next-1+len(h.buf))%len(h.buf)], true
}

// rate is a rate at a sample, in rows per minute.
type rate struct {
	At        time.Time
	PerMinute float64
}

// rateWindow is the span a charted rate is averaged over. The pending
// count moves by whole claims and outcome writes, so a rate between two
// samples 10 s apart swings by a claim's rows × 6 per minute either way
// around the true value; over a minute of samples it settles.
const rateWindow = time.Minute

// windowStart returns the index of the sample the rate at samples[i]
// is measured from: the oldest within rateWindow before it (the latest of
// several taken at one instant), else the one just before it; -1 when
// samples[i] was taken at the same instant as the one before.
func windowStart(samples []sample, i int) int {
	at := samples[i].At
	if i == 0 || !samples[i-1].At.Before(at) {
		return -1
	}
	k := i - 1
	for j := i - 2; j >= 0 && !samples[j].At.Before(at.Add(-rateWindow)); j-- {
		if samples[j].At.Before(samples[k].At) {
			k = j
		}
	}
	return k
}

// drainRates returns the net drain at each sample, averaged over
// rateWindow: how fast the backlog of pending rows shrank, which is the
// publish rate minus the enqueue rate (negative while the backlog grows,
// about zero while the relay keeps up with the producers).
func drainRates(samples []sample) []rate {
	var out []rate
	for i := range samples {
		k := windowStart(samples, i)
		if k < 0 {
			continue
		}
		a, b := samples[k], samples[i]
		out = append(out, rate{At: b.At, PerMinute: float64(a.Pending-b.Pending) / b.At.Sub(a.At).Minutes()})
	}
	return out
}

// publishRates returns the publish rate at each sample whose store counted
// its published rows, averaged over rateWindow (over the samples since the
// last one without a count).
func publishRates(samples []sample) []rate {
	var out []rate
	for i := range samples {
		k := windowStart(samples, i)
		if k < 0 || !samples[i].HasPublished {
			continue
		}
		var n int64
		for j := i; j > k; j-- {
			if !samples[j].HasPublished {
				k = j
				break
			}
			n += samples[j].Published
		}
		if d := samples[i].At.Sub(samples[k].At); d > 0 {
			out = append(out, rate{At: samples[i].At, PerMinute: float64(n) / d.Minutes()})
		}
	}
	return out
}

// averageDrain is the net drain over the samples taken in the last span,
// and whether there were two to compare.
func averageDrain(samples []sample, span time.Duration) (float64, bool) {
	if len(samples) < 2 {
		return 0, false
	}
	last := samples[len(samples)-1]
	first := samples[0]
	for _, s := range samples {
		if !s.At.Before(last.At.Add(-span)) {
			first = s
			break
		}
	}
	d := last.At.Sub(first.At)
	if d <= 0 {
		return 0, false
	}
	return float64(first.Pending-last.Pending) / d.Minutes(), true
}

// sampleOnce reads the gauges into the history.
func (s *Server) sampleOnce(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.StoreTimeout)
	defer cancel()
	st, err := s.cfg.Store.Stats(ctx)
	if err != nil {
		return err
	}
	smp := sample{At: st.AsOf, Pending: st.Pending, Due: st.Due, Dead: st.Dead}
	if prev, ok := s.history.latest(); ok && s.cfg.Published != nil && prev.At.Before(st.AsOf) {
		n, err := s.cfg.Published(ctx, prev.At, st.AsOf)
		if err != nil {
			return err
		}
		smp.Published, smp.HasPublished = n, true
	}
	s.history.add(smp)
	return nil
}

// sampleEvery samples at once, then every interval until ctx is done. A
// failure is logged when it starts and when it ends, not on every tick.
func (s *Server) sampleEvery(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	failing := false
	for {
		err := s.sampleOnce(ctx)
		switch {
		case err != nil && ctx.Err() != nil:
			return
		case err != nil && !failing:
			s.log.Warn("admin page cannot read the outbox's gauges", "error", err)
		case err == nil && failing:
			s.log.Info("admin page reads the outbox's gauges again")
		}
		failing = err != nil
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
