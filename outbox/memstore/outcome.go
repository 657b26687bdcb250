package memstore

import (
	"context"
	"time"

	"github.com/reliar/reliar/outbox/outboxdriver"
)

// Every outcome write below is fenced by the row's id and current lease
// token: a lease that is not the row's current one affects nothing.

// Complete marks the leased rows published.
func (s *Store) Complete(ctx context.Context, leases []outboxdriver.Lease) (int64, error) {
	if err := checkContext(ctx, "complete"); err != nil {
		return 0, err
	}
	return s.each(leases, func(r *row, now time.Time) {
		r.attempts++
		r.clearLease()
		r.publishedAt = now
		s.move(r, published)
	}), nil
}

// Fail records failed attempts: a retry after RetryAfter, or a move to dead
// when DeadReason is set. The error text is sanitized with
// outboxdriver.SanitizeError.
func (s *Store) Fail(ctx context.Context, failures []outboxdriver.FailedOutcome) (int64, error) {
	if err := checkContext(ctx, "fail"); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	var n int64
	for _, f := range failures {
		r := s.held(f.Lease)
		if r == nil {
			continue
		}
		n++
		r.attempts++
		msg := outboxdriver.SanitizeError(f.Error)
		if f.DeadReason != "" {
			s.kill(r, f.DeadReason, &msg, now)
			continue
		}
		r.lastError = &msg
		r.clearLease()
		r.availableAt = now.Add(max(f.RetryAfter, 0))
		s.park(r, now)
	}
	return n, nil
}

// Release clears the leases without recording an attempt.
func (s *Store) Release(ctx context.Context, leases []outboxdriver.Lease) (int64, error) {
	if err := checkContext(ctx, "release"); err != nil {
		return 0, err
	}
	return s.each(leases, func(r *row, now time.Time) {
		r.clearLease()
		s.park(r, now)
	}), nil
}

// ExtendLease moves the lease expiry of the held rows to now + d.
func (s *Store) ExtendLease(ctx context.Context, leases []outboxdriver.Lease, d time.Duration) (int64, error) {
	if err := checkContext(ctx, "extend lease"); err != nil {
		return 0, err
	}
	return s.each(leases, func(r *row, now time.Time) {
		r.lockedUntil = now.Add(d)
		s.move(r, leased)
	}), nil
}

// each applies f to every row that leases name by its current token and
// returns how many there were.
func (s *Store) each(leases []outboxdriver.Lease, f func(r *row, now time.Time)) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	var n int64
	for _, l := range leases {
		if r := s.held(l); r != nil {
			f(r, now)
			n++
		}
	}
	return n
}

// held returns the row l names when l is its current lease.
func (s *Store) held(l outboxdriver.Lease) *row {
	if r := s.rows[l.ID]; r != nil && r.holds(l) {
		return r
	}
	return nil
}

// park files a pending row without a lease: ready, or parked when expired.
func (s *Store) park(r *row, now time.Time) {
	if r.expired(now) {
		s.move(r, parked)
		return
	}
	s.move(r, ready)
}
