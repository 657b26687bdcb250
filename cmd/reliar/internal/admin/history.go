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

// rate is the net drain between two samples, in rows per minute: how much
// the backlog of pending rows shrank. Stats has no published counter, so
// this is the publish rate minus the enqueue rate (negative while the
// backlog grows); on an idle producer it is the publish rate.
type rate struct {
	At        time.Time
	PerMinute float64
}

// drainRates returns the net drain between consecutive samples.
func drainRates(samples []sample) []rate {
	var out []rate
	for i := 1; i < len(samples); i++ {
		a, b := samples[i-1], samples[i]
		d := b.At.Sub(a.At)
		if d <= 0 {
			continue
		}
		out = append(out, rate{At: b.At, PerMinute: float64(a.Pending-b.Pending) / d.Minutes()})
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
	s.history.add(sample{At: st.AsOf, Pending: st.Pending, Due: st.Due, Dead: st.Dead})
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
