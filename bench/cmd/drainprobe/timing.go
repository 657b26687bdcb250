package main

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// timedStore records the duration of every Acquire and Complete.
type timedStore struct {
	outbox.Store
	start time.Time

	mu        sync.Mutex
	claims    []call
	completes []call
	rowsDone  int64
	end       time.Time
}

// call is one timed store call.
type call struct {
	took time.Duration
	rows int
}

func (s *timedStore) Acquire(ctx context.Context, req outboxdriver.AcquireRequest) (outboxdriver.AcquiredBatch, error) {
	start := time.Now()
	b, err := s.Store.Acquire(ctx, req)
	s.mu.Lock()
	s.claims = append(s.claims, call{time.Since(start), b.Len()})
	s.mu.Unlock()
	return b, err
}

func (s *timedStore) Complete(ctx context.Context, leases []outboxdriver.Lease) (int64, error) {
	start := time.Now()
	n, err := s.Store.Complete(ctx, leases)
	s.mu.Lock()
	s.completes = append(s.completes, call{time.Since(start), len(leases)})
	s.rowsDone += n
	s.mu.Unlock()
	return n, err
}

func (s *timedStore) completed() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rowsDone
}

func (s *timedStore) finish() {
	s.mu.Lock()
	s.end = time.Now()
	s.mu.Unlock()
}

// callStats summarises calls over a drain of the given length.
type callStats struct {
	count, rows    int
	mean, p50, max time.Duration
	busy           float64 // share of the drain with a call in flight, if calls never overlap
}

func summarise(calls []call, drain time.Duration) callStats {
	if len(calls) == 0 {
		return callStats{}
	}
	st := callStats{count: len(calls)}
	took := make([]time.Duration, len(calls))
	var total time.Duration
	for i, c := range calls {
		took[i] = c.took
		total += c.took
		st.rows += c.rows
	}
	slices.Sort(took)
	st.mean = total / time.Duration(len(calls))
	st.p50 = took[len(took)/2]
	st.max = took[len(took)-1]
	st.busy = total.Seconds() / drain.Seconds()
	return st
}
