package memstore

import (
	"context"

	"github.com/reliar/reliar/outbox/outboxdriver"
)

// Stats partitions the pending rows into leased, expired, scheduled and due,
// and counts the dead ones. It scans the pending rows, never the terminal
// ones.
func (s *Store) Stats(ctx context.Context) (outboxdriver.Stats, error) {
	if err := checkContext(ctx, "stats"); err != nil {
		return outboxdriver.Stats{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	st := outboxdriver.Stats{AsOf: now, Dead: int64(s.dead.Len())}
	oldest := now
	for _, r := range s.pending {
		switch {
		case r.liveLease(now):
			st.Leased++
		case r.expired(now):
			st.ExpiredPending++
		case r.availableAt.After(now):
			st.Scheduled++
		default:
			st.Due++
			if r.availableAt.Before(oldest) {
				oldest = r.availableAt
			}
		}
	}
	st.Pending = st.Leased + st.ExpiredPending + st.Scheduled + st.Due
	st.OldestDueAge = now.Sub(oldest)
	return st, nil
}
