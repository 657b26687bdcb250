package memstore

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// ListDead returns one page of dead rows ordered by sequence (descending
// for a Newest listing). Rows that cannot be decoded come back in
// Poisoned; the cursor is the last sequence scanned, set only when the page
// was full.
func (s *Store) ListDead(ctx context.Context, q outboxdriver.DeadQuery) (outboxdriver.DeadLetterPage, error) {
	if err := checkContext(ctx, "list dead"); err != nil {
		return outboxdriver.DeadLetterPage{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var matches []*row
	bound := q.SequenceBound()
	for _, r := range s.dead.all() {
		if (q.Newest && r.seq < bound || !q.Newest && r.seq > bound) && deadMatches(r, q) {
			matches = append(matches, r)
		}
	}
	slices.SortFunc(matches, func(a, b *row) int { return cmp.Compare(a.seq, b.seq) })
	if q.Newest {
		slices.Reverse(matches)
	}
	limit := q.EffectiveLimit()
	var page outboxdriver.DeadLetterPage
	if len(matches) >= limit {
		matches = matches[:limit]
		next := matches[limit-1].seq
		if q.Newest {
			page.NextBeforeSequence = &next
		} else {
			page.NextAfterSequence = &next
		}
	}
	for _, r := range matches {
		if r.decodeErr != nil {
			page.Poisoned = append(page.Poisoned, outboxdriver.PoisonedRecord{ID: r.enc.ID, Sequence: r.seq, Error: r.decodeErr.Error()})
			continue
		}
		rec, err := r.listed().Record()
		if err != nil {
			page.Poisoned = append(page.Poisoned, outboxdriver.PoisonedRecord{ID: r.enc.ID, Sequence: r.seq, Error: err.Error()})
			continue
		}
		page.Records = append(page.Records, rec)
	}
	return page, nil
}

// listed is the row as a SQL store's listing reads it: the same rules of
// what is cut apply, so that the memstore lists what the others list.
func (r *row) listed() outboxdriver.ListedRow {
	enc := r.enc
	enc.Sequence, enc.Attempts, enc.CreatedAt, enc.ExpiresAt = r.seq, r.attempts, r.createdAt, r.expiresAt
	enc.AvailableAt = &r.availableAt
	l := outboxdriver.ListedRow{Row: enc, PayloadSize: len(r.enc.Payload), DeadReason: r.deadReason, DeadAt: r.deadAt}
	if r.lastError != nil {
		l.LastError = *r.lastError
	}
	return l
}

// DeadPayload reads at most max bytes of one dead row's payload.
func (s *Store) DeadPayload(ctx context.Context, id reliar.MessageID, max int) (outboxdriver.DeadPayload, error) {
	if err := checkContext(ctx, "dead payload"); err != nil {
		return outboxdriver.DeadPayload{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.rows[id]
	if r == nil || r.state != dead {
		return outboxdriver.DeadPayload{}, fmt.Errorf("memstore: dead payload %s: %w", id, outboxdriver.ErrNotDead)
	}
	n := min(len(r.enc.Payload), outboxdriver.EffectivePayloadCap(max))
	return outboxdriver.DeadPayload{
		ID: id, Sequence: r.seq, MessageType: r.enc.MessageType, ContentType: r.enc.ContentType,
		Payload: slices.Clone(r.enc.Payload[:n]), Size: len(r.enc.Payload), Cut: n < len(r.enc.Payload),
	}, nil
}

func deadMatches(r *row, q outboxdriver.DeadQuery) bool {
	if q.MessageType != "" && r.enc.MessageType != q.MessageType {
		return false
	}
	if q.TenantID != "" && (r.enc.TenantID == nil || *r.enc.TenantID != q.TenantID) {
		return false
	}
	if !q.DeadBefore.IsZero() && !r.deadAt.Before(q.DeadBefore) {
		return false
	}
	return true
}

// RetryDead makes dead rows due now: it clears dead_at, dead_reason and the
// lease, resets attempts and lapsed claims, keeps last_error, and clears an
// expires_at already past. Rows that are not dead are left alone.
func (s *Store) RetryDead(ctx context.Context, ids []reliar.MessageID) (int64, error) {
	if err := checkContext(ctx, "retry dead"); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	var n int64
	for _, id := range ids {
		r := s.rows[id]
		if r == nil || r.state != dead {
			continue
		}
		r.deadAt = time.Time{}
		r.deadReason = ""
		r.clearLease()
		r.availableAt = now
		r.attempts = 0
		r.lapsedClaims = 0
		if r.expired(now) {
			r.expiresAt = nil
			r.env.Metadata.Delivery.ExpiresAt = nil // the column is authoritative, as in outboxdriver.Row.Envelope
		}
		s.move(r, ready)
		n++
	}
	return n, nil
}

// PurgeDead deletes dead rows. Rows that are not dead are left alone.
func (s *Store) PurgeDead(ctx context.Context, ids []reliar.MessageID) (int64, error) {
	if err := checkContext(ctx, "purge dead"); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var n int64
	for _, id := range ids {
		if r := s.rows[id]; r != nil && r.state == dead {
			s.delete(r)
			n++
		}
	}
	return n, nil
}
