package pgstore

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// The zero-claim path (on unless WithoutHandoff). Enqueue inserts eligible rows already
// leased to the subscribed dispatcher and notifies the table's channel with a
// token naming the enqueue; the listener, on that notification (delivered
// only after the producer's commit), hands the rows over. An enqueue waits
// in pending until then; one never proven (rolled back, notification lost
// while the listener reconnected) is dropped after a lease, and its rows,
// if committed, are claimed again when their lease lapses.

// handoffs is the store's subscription and the enqueues waiting for proof.
type handoffs struct {
	mu      sync.Mutex
	sub     *handoffSub
	pending map[string]*pendingHandoff
	swept   time.Time
}

// handoffSub is a dispatcher's subscription.
type handoffSub struct {
	ctx context.Context
	req outboxdriver.HandoffRequest
	out chan []outboxdriver.Record
}

// pendingHandoff is an enqueue whose commit is not proven yet.
type pendingHandoff struct {
	sub  *handoffSub
	recs []outboxdriver.Record
	// sent is when the statement was sent (the process's monotonic clock):
	// the lease started at the database after it, so sent+Lease bounds the
	// lease's end from below without trusting the clocks to agree.
	sent time.Time
}

// handoffOn reports whether the store leases rows at enqueue.
func (s *Store) handoffOn() bool { return !s.cfg.noHandoff && !s.cfg.noNotify }

// Handoff implements outboxdriver.Handoffer: it fails with WithoutHandoff or
// WithoutNotify, and with outboxdriver.ErrHandoffTaken while another
// subscription is active. The hand-off needs the notification listener,
// which a Wakeups subscription runs: the dispatcher holds one.
func (s *Store) Handoff(ctx context.Context, req outboxdriver.HandoffRequest) (<-chan []outboxdriver.Record, error) {
	if !s.handoffOn() {
		return nil, errors.New("pgstore: hand-offs are off (WithoutHandoff or WithoutNotify)")
	}
	if req.Worker == "" || req.Lease <= 0 || req.Reserve == nil || req.Unreserve == nil {
		return nil, errors.New("pgstore: hand-off request needs a worker, a lease, Reserve and Unreserve")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// Every batch holds a reserved row at least, and reservations stay
	// within MaxRows: the channel never fills.
	sub := &handoffSub{ctx: ctx, req: req, out: make(chan []outboxdriver.Record, max(req.MaxRows, 1))}
	h := &s.ho
	h.mu.Lock()
	if h.sub != nil && h.sub.ctx.Err() != nil {
		// Ended, and its clean-up not run yet.
		h.sub = nil
	}
	if h.sub != nil {
		h.mu.Unlock()
		return nil, outboxdriver.ErrHandoffTaken
	}
	h.sub = sub
	h.mu.Unlock()
	context.AfterFunc(ctx, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.sub == sub {
			h.sub = nil
		}
		for tok, p := range h.pending {
			if p.sub == sub {
				delete(h.pending, tok)
			}
		}
		close(sub.out)
	})
	return sub.out, nil
}

// active returns the subscription, if any.
func (h *handoffs) active() *handoffSub {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.sub
}

// eligible reports whether every message may be leased at enqueue.
func eligible(msgs []reliar.Outgoing, tenants bool) bool {
	for i := range msgs {
		m := &msgs[i]
		if m.OrderingKey != "" || !m.AvailableAt.IsZero() || m.Metadata.Delivery.ExpiresAt != nil ||
			(!tenants && m.Metadata.TenantID != "") {
			return false
		}
	}
	return true
}

// enqueueLeased is Enqueue on the zero-claim path. ok is false when the
// messages do not qualify or the dispatcher has no room: the caller then
// enqueues them as usual.
func (s *Store) enqueueLeased(ctx context.Context, tx pgx.Tx, sub *handoffSub, msgs []reliar.Outgoing) (ids []reliar.MessageID, ok bool, err error) {
	n := len(msgs)
	if n == 0 || !eligible(msgs, sub.req.Tenants) || !sub.req.Reserve(n) {
		return nil, false, nil
	}
	reserved := true
	defer func() {
		if reserved {
			sub.req.Unreserve(n)
		}
	}()
	args, ids, rows, err := s.enqueueArgs(ctx, msgs, true)
	if err != nil {
		return nil, true, err
	}
	tokens := make([][16]byte, n)
	for i := range tokens {
		tokens[i] = uuid.New()
	}
	proof := uuid.NewString()
	args[0] = s.n.channel
	args = append(args, sub.req.Worker, sub.req.Lease.Microseconds(), tokens, proof)
	sent := time.Now()
	res, err := tx.Query(ctx, s.sql.enqueueLeased, args...)
	if err != nil {
		return nil, true, enqueueErr(err)
	}
	at := make(map[reliar.MessageID]int, n)
	for i, id := range ids {
		at[id] = i
	}
	recs := make([]outboxdriver.Record, n)
	got := 0
	for res.Next() {
		var (
			id      reliar.MessageID
			seq     int64
			created time.Time
		)
		if err := res.Scan(&id, &seq, &created); err != nil {
			res.Close()
			return nil, true, enqueueErr(err)
		}
		i, known := at[id]
		if !known {
			continue
		}
		r := &rows[i]
		r.Sequence, r.CreatedAt = seq, created
		env, err := r.Envelope()
		if err != nil {
			// NewRow's own rows always decode; should one not, the row is
			// left to its lease and claimed (and killed as poison) then.
			continue
		}
		recs[got] = outboxdriver.Record{Envelope: env, Token: tokens[i], ClaimCount: 1, AvailableAt: created}
		got++
	}
	res.Close()
	if err := res.Err(); err != nil {
		return nil, true, enqueueErr(err)
	}
	recs = recs[:got]
	h := &s.ho
	h.mu.Lock()
	if h.sub == sub {
		if h.pending == nil {
			h.pending = make(map[string]*pendingHandoff)
		}
		h.pending[proof] = &pendingHandoff{sub: sub, recs: recs, sent: sent}
		reserved = false
		if got < n {
			sub.req.Unreserve(n - got)
		}
		h.sweepLocked(sent)
	}
	h.mu.Unlock()
	return ids, true, nil
}

// sweepLocked drops, at most once a second, the enqueues waiting longer
// than a lease: rolled back, or their notification lost.
func (h *handoffs) sweepLocked(now time.Time) {
	if now.Sub(h.swept) < time.Second {
		return
	}
	h.swept = now
	for tok, p := range h.pending {
		if now.Sub(p.sent) > p.sub.req.Lease {
			delete(h.pending, tok)
			p.sub.req.Unreserve(len(p.recs))
		}
	}
}

// take hands over the rows of the enqueue a notification's payload names.
// It reports false when the payload names no enqueue of this store (a plain
// wake-up, or another process's enqueue): the caller wakes the claimers.
func (h *handoffs) take(payload string) bool {
	if payload == "" {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	p := h.pending[payload]
	if p == nil {
		return false
	}
	delete(h.pending, payload)
	req := p.sub.req
	switch {
	case h.sub != p.sub:
		// The subscription ended: its channel is closed.
	case time.Since(p.sent) > req.Lease-req.MinLeft:
		// Too little lease left to publish within it: the rows come
		// back when it lapses.
		req.Unreserve(len(p.recs))
	default:
		select {
		case p.sub.out <- p.recs:
		default:
			req.Unreserve(len(p.recs))
		}
	}
	return true
}
