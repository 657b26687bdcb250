package memstore

import (
	"time"

	"github.com/google/uuid"
	"github.com/reliar/reliar"
)

// RowState is the bookkeeping of one stored row, as Inspect reports it. Nil
// pointers are NULL columns.
type RowState struct {
	Sequence      int64
	Attempts      int
	ClaimCount    int
	LapsedClaims  int
	LockedBy      *string
	LockedUntil   *time.Time
	LeaseToken    *uuid.UUID
	LastClaimedAt *time.Time
	AvailableAt   time.Time
	ExpiresAt     *time.Time
	PublishedAt   *time.Time
	DeadAt        *time.Time
	DeadReason    *string
	LastError     *string
}

// Inspect returns the bookkeeping of the row with id, and false when there is
// no such row.
func (s *Store) Inspect(id reliar.MessageID) (RowState, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.rows[id]
	if r == nil {
		return RowState{}, false
	}
	st := RowState{
		Sequence:      r.seq,
		Attempts:      r.attempts,
		ClaimCount:    r.claimCount,
		LapsedClaims:  r.lapsedClaims,
		LastClaimedAt: clone(r.lastClaimedAt),
		AvailableAt:   r.availableAt,
		ExpiresAt:     clone(r.expiresAt),
		LastError:     clone(r.lastError),
	}
	if r.hasLease {
		st.LockedBy = clone(&r.holder)
		st.LockedUntil = clone(&r.lockedUntil)
		st.LeaseToken = clone(&r.token)
	}
	switch r.state {
	case published:
		st.PublishedAt = clone(&r.publishedAt)
	case dead:
		st.DeadAt = clone(&r.deadAt)
		reason := string(r.deadReason)
		st.DeadReason = &reason
	}
	return st, true
}

func clone[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
