package memstore

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// Acquire claims up to req.BatchSize due rows in (available_at, sequence)
// order, or under Fairness FairnessTenant shared among tenants (see
// acquireFair). Undecodable rows go dead with reason undecodable and come back in
// Poisoned; lapsed rows whose lapsed claims reached req.MaxClaims go dead with
// reason max_claims and come back in DeadMaxClaims. With Ordering PerKey a
// keyed row is claimable only while it is the head of its key.
func (s *Store) Acquire(ctx context.Context, req outboxdriver.AcquireRequest) (outboxdriver.AcquiredBatch, error) {
	if err := checkContext(ctx, "acquire"); err != nil {
		return outboxdriver.AcquiredBatch{}, err
	}
	var batch outboxdriver.AcquiredBatch
	fair := req.Fairness == outboxdriver.FairnessTenant
	if fair {
		if req.Ordering == outboxdriver.PerKey {
			return batch, errFairPerKey
		}
		batch.TenantCursor = req.TenantCursor
	}
	if req.BatchSize <= 0 {
		return batch, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.lapse(now)
	s.parkExpired(now)
	if fair {
		s.acquireFair(req, now, &batch)
		return batch, nil
	}
	candidates := s.ready
	if req.Ordering == outboxdriver.PerKey {
		candidates = s.heads
	}
	batch.Records = make([]outboxdriver.Record, 0, min(req.BatchSize, candidates.Len()))
	for batch.Len() < req.BatchSize {
		r := candidates.peek()
		if r == nil || r.availableAt.After(now) {
			break
		}
		if s.claimOne(r, req, now, &batch) && req.Ordering == outboxdriver.PerKey && r.key != "" {
			// The head went dead in this claim: like a database's single
			// claim statement, which sees the key as it was when the claim
			// began, the claim takes no other row of that key.
			s.freezeKey(r.key)
		}
	}
	if len(s.frozen) > 0 {
		keys := s.frozen
		s.frozen = nil
		for key := range keys {
			s.refreshHead(key)
		}
	}
	return batch, nil
}

// lapse moves rows whose lease lapsed back to ready. They keep their lapsed
// lease, which makes their next claim a lapsed reclaim.
func (s *Store) lapse(now time.Time) {
	for {
		r := s.leased.peek()
		if r == nil || r.lockedUntil.After(now) {
			return
		}
		s.move(r, ready)
	}
}

// freezeKey takes key's head out of the heads index until the running claim
// ends.
func (s *Store) freezeKey(key string) {
	if s.frozen == nil {
		s.frozen = make(map[string]bool)
	}
	s.frozen[key] = true
	if cur := s.headOf[key]; cur != nil {
		s.heads.remove(cur)
		delete(s.headOf, key)
	}
}

// parkExpired parks the ready rows past their expires_at, so that none of
// them, scheduled for later or not, holds its key back.
func (s *Store) parkExpired(now time.Time) {
	for {
		r := s.expiring.peek()
		if r == nil || r.expiresAt.After(now) {
			return
		}
		s.move(r, parked)
	}
}

// claimOne takes the due row r out of the candidates: claimed, moved to dead,
// or parked when expired. It reports whether r went dead.
func (s *Store) claimOne(r *row, req outboxdriver.AcquireRequest, now time.Time, batch *outboxdriver.AcquiredBatch) (killed bool) {
	if r.expired(now) {
		s.move(r, parked)
		return false
	}
	reclaimed := r.hasLease
	if reclaimed && req.MaxClaims > 0 && r.lapsedClaims >= req.MaxClaims {
		s.kill(r, outboxdriver.DeadMaxClaims, r.lastError, now)
		batch.DeadMaxClaims = append(batch.DeadMaxClaims, r.enc.ID)
		return true
	}
	env, err := r.envelope()
	if err != nil {
		msg := outboxdriver.SanitizeError(err.Error())
		s.kill(r, outboxdriver.DeadUndecodable, &msg, now)
		batch.Poisoned = append(batch.Poisoned, outboxdriver.PoisonedRecord{ID: r.enc.ID, Sequence: r.seq, Error: err.Error()})
		return true
	}
	rec := outboxdriver.Record{
		Envelope:      env,
		Attempts:      r.attempts,
		Reclaimed:     reclaimed,
		PrevClaimedAt: r.lastClaimedAt,
		AvailableAt:   r.availableAt,
	}
	if reclaimed {
		r.lapsedClaims++
	}
	r.claimCount++
	claimedAt := now
	r.lastClaimedAt = &claimedAt
	r.hasLease = true
	r.holder = req.Worker
	r.lockedUntil = now.Add(req.Lease)
	r.token = uuid.New()
	rec.Token = r.token
	rec.ClaimCount = r.claimCount
	rec.LapsedClaims = r.lapsedClaims
	s.move(r, leased)
	batch.Records = append(batch.Records, rec)
	return false
}

// kill moves a pending row to dead, clearing its lease.
func (s *Store) kill(r *row, reason outboxdriver.DeadReason, lastError *string, now time.Time) {
	r.clearLease()
	r.deadAt = now
	r.deadReason = reason
	r.lastError = lastError
	s.move(r, dead)
}
