package memstore

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/reliar/reliar/outbox/outboxdriver"
)

// defaultPurgeBatch caps each purge statement when the request gives no
// BatchSize.
const defaultPurgeBatch = 1000

// expiredError is the last_error of rows the expiry sweep moves to dead.
const expiredError = "expired before publication"

// Purge runs one bounded pass: it deletes published rows older than
// PublishedRetention and dead rows older than DeadRetention (each skipped
// when nil), and moves expired pending rows whose lease is free to dead with
// reason expired. Each of the three steps touches at most BatchSize rows
// (1000 when BatchSize is not positive). Leased rows are never touched.
func (s *Store) Purge(ctx context.Context, req outboxdriver.PurgeRequest) (outboxdriver.PurgeReport, error) {
	if err := checkContext(ctx, "purge"); err != nil {
		return outboxdriver.PurgeReport{}, err
	}
	limit := req.BatchSize
	if limit <= 0 {
		limit = defaultPurgeBatch
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	var rep outboxdriver.PurgeReport
	if req.PublishedRetention != nil {
		cutoff := now.Add(-*req.PublishedRetention)
		rep.PublishedDeleted = s.deleteOlder(s.published, limit, func(r *row) bool { return r.publishedAt.Before(cutoff) })
	}
	if req.DeadRetention != nil {
		cutoff := now.Add(-*req.DeadRetention)
		rep.DeadDeleted = s.deleteOlder(s.dead, limit, func(r *row) bool { return r.deadAt.Before(cutoff) })
	}
	rep.Expired = s.expire(limit, now)
	return rep, nil
}

// deleteOlder deletes up to limit rows from the top of h while old says so.
func (s *Store) deleteOlder(h *rowHeap, limit int, old func(*row) bool) int64 {
	var n int64
	for n < int64(limit) {
		r := h.peek()
		if r == nil || !old(r) {
			break
		}
		s.delete(r)
		n++
	}
	return n
}

// expire moves up to limit expired pending rows whose lease is free to dead,
// in sequence order. It scans the pending rows, never the terminal ones.
func (s *Store) expire(limit int, now time.Time) int64 {
	var victims []*row
	for _, r := range s.pending {
		if r.expired(now) && !r.liveLease(now) {
			victims = append(victims, r)
		}
	}
	slices.SortFunc(victims, func(a, b *row) int { return cmp.Compare(a.seq, b.seq) })
	if len(victims) > limit {
		victims = victims[:limit]
	}
	msg := expiredError
	for _, r := range victims {
		s.kill(r, outboxdriver.DeadExpired, &msg, now)
	}
	return int64(len(victims))
}
