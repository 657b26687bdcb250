package outboxdriver

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/reliar/reliar"
)

// ErrHandoffTaken is the error of a Handoff call while another dispatcher
// of the process holds the store's subscription.
var ErrHandoffTaken = errors.New("outboxdriver: another dispatcher of this process takes the store's hand-offs")

// Handoffer is implemented by stores that can lease a row to a dispatcher of
// the same process as it is enqueued, and hand it over once its commit is
// proven, so that neither a claim nor its commit sits between the producer's
// commit and the publish (the zero-claim path).
//
// A store that implements it inserts an eligible row already leased to
// HandoffRequest.Worker, its lease computed from the database's clock at the
// statement (never the transaction's start), and hands the row over only
// after a notification naming the enqueue proves that the producer's
// transaction committed: the store never sees the producer's Commit. A row
// whose hand-off never comes (the transaction rolled back, the notification
// was lost, the process died) is claimed again once its lease lapses, as a
// lapsed claim. Rows with an ordering key, a future AvailableAt or an
// ExpiresAt are never leased at enqueue, nor rows with a tenant unless
// HandoffRequest.Tenants.
type Handoffer interface {
	// Handoff subscribes a dispatcher to the rows this store leases at
	// enqueue, for ctx's life. It must not block: the dispatcher calls it
	// from its loop. Rows arrive on the returned channel, a batch per
	// enqueue, after their commit; the dispatcher gives back the batch's
	// Reserved room once it holds the rows. The store closes the channel once ctx is
	// done; rows still waiting for their commit's proof then come back
	// after their lease. A store serves one subscription at a time and
	// refuses another with an error.
	Handoff(ctx context.Context, req HandoffRequest) (<-chan HandedOver, error)
}

// HandedOver is one enqueue's rows, handed over after their commit.
type HandedOver struct {
	Records []Record
	// Reserved is the room Reserve granted that the batch still holds:
	// the dispatcher calls Unreserve(Reserved) once it holds the rows, so
	// that they are counted all along. It is 0 when the reservation had
	// already ended (a proof later than HandoffReserveFor).
	Reserved int
}

// HandoffRequest is a dispatcher's subscription to hand-offs.
type HandoffRequest struct {
	// Worker is written to locked_by, as a claim does.
	Worker string
	// Lease is the lease given at enqueue.
	Lease time.Duration
	// MinLeft is the lease a row must have left when it is handed over (the
	// dispatcher's PublishTimeout): a row whose producer took longer to
	// commit is dropped and comes back after its lease.
	MinLeft time.Duration
	// Tenants allows rows with a tenant (false when per-tenant caps apply).
	Tenants bool
	// MaxRows is the most rows the dispatcher holds (its MaxInFlight):
	// Reserve never allows more waiting for their hand-off.
	MaxRows int
	// Reserve asks for room for n rows before they are leased at enqueue:
	// rows leased at enqueue count toward the dispatcher's MaxInFlight from
	// then on, until they are handed over or HandoffReserveFor has passed.
	// It is called from producers' goroutines.
	Reserve func(n int) bool
	// Unreserve gives the room of n reserved rows back: handed over (the
	// dispatcher holds them now), or the enqueue failed, or its proof is
	// late or never comes.
	Unreserve func(n int)
}

// HandoffReserveFor is how long an enqueue waiting for the proof of its
// commit keeps its rows reserved against the dispatcher's MaxInFlight. A
// transaction rolled back never sends its proof: its reservation must not
// hold the dispatcher's room for a whole lease. A proof that comes later
// still hands the rows over (the dispatcher may then hold a few rows over
// MaxInFlight), if enough lease is left.
const HandoffReserveFor = 100 * time.Millisecond

// HandoffBook is the bookkeeping of a Handoffer store: its one
// subscription, the enqueues waiting for the proof of their commit, and the
// rules for handing them over. A store embeds one; the zero value is ready.
// It is safe for concurrent use.
//
// HandoffBook is a helper of Reliar's own stores, kept compatible only with
// the store modules of the same release (see the package documentation).
type HandoffBook struct {
	mu      sync.Mutex
	sub     *HandoffSub
	pending map[string]*pendingHandoff
}

// HandoffSub is one dispatcher's subscription, as an enqueue sees it.
type HandoffSub struct {
	ctx context.Context
	req HandoffRequest
	out chan HandedOver
}

// Request returns the subscription's request.
func (s *HandoffSub) Request() HandoffRequest { return s.req }

// pendingHandoff is an enqueue whose commit is not proven yet.
type pendingHandoff struct {
	sub  *HandoffSub
	recs []Record
	// sent is when the enqueue's statement was sent (this process's
	// monotonic clock): the lease started after it, so sent+Lease bounds
	// the lease's end from below whatever the database's clock says.
	sent time.Time
	// reserved: the rows still count toward the dispatcher's MaxInFlight.
	reserved bool
	// timer ends the reservation, then forgets the enqueue once no proof
	// could leave it enough lease.
	timer *time.Timer
}

// Subscribe implements Handoffer.Handoff for the store: it validates req,
// refuses a second subscription with ErrHandoffTaken, and closes the
// channel once ctx is done.
func (b *HandoffBook) Subscribe(ctx context.Context, req HandoffRequest) (<-chan HandedOver, error) {
	if req.Worker == "" || req.Lease <= 0 || req.Reserve == nil || req.Unreserve == nil {
		return nil, errors.New("outboxdriver: a hand-off request needs a worker, a lease, Reserve and Unreserve")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// Reserved batches hold one row at least and stay within MaxRows; late
	// proofs of expired reservations may add some: the channel is large,
	// and a send that finds it full drops the batch to its lease.
	sub := &HandoffSub{ctx: ctx, req: req, out: make(chan HandedOver, 2*max(req.MaxRows, 1))}
	b.mu.Lock()
	if b.sub != nil && b.sub.ctx.Err() != nil {
		b.sub = nil // ended, its clean-up not run yet
	}
	if b.sub != nil {
		b.mu.Unlock()
		return nil, ErrHandoffTaken
	}
	b.sub = sub
	b.mu.Unlock()
	context.AfterFunc(ctx, func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		if b.sub == sub {
			b.sub = nil
		}
		for proof, p := range b.pending {
			if p.sub == sub {
				p.timer.Stop()
				delete(b.pending, proof)
			}
		}
		close(sub.out)
	})
	return sub.out, nil
}

// Begin starts an enqueue on the zero-claim path: it returns the
// subscription with room reserved for every message, or nil when there is
// no subscription, a message does not qualify (an ordering key, an
// AvailableAt, an ExpiresAt, or a tenant the request does not allow) or the
// dispatcher has no room. After a non-nil Begin the store calls Wait with
// the leased rows, or Unreserve(len(msgs)) when the enqueue failed.
func (b *HandoffBook) Begin(msgs []reliar.Outgoing) *HandoffSub {
	b.mu.Lock()
	sub := b.sub
	b.mu.Unlock()
	if sub == nil || len(msgs) == 0 {
		return nil
	}
	for i := range msgs {
		m := &msgs[i]
		if m.OrderingKey != "" || !m.AvailableAt.IsZero() || m.Metadata.Delivery.ExpiresAt != nil ||
			(!sub.req.Tenants && m.Metadata.TenantID != "") {
			return nil
		}
	}
	if !sub.req.Reserve(len(msgs)) {
		return nil
	}
	return sub
}

// Wait registers an enqueue of reserved rows, leased to sub, whose commit
// the notification naming proof will prove; recs are the rows to hand over
// (fewer than reserved when some could not be decoded: their room is given
// back). sent is when the enqueue's statement was sent. The reservation
// ends at the hand-off, or after HandoffReserveFor.
func (b *HandoffBook) Wait(sub *HandoffSub, proof string, recs []Record, reserved int, sent time.Time) {
	if extra := reserved - len(recs); extra > 0 {
		sub.req.Unreserve(extra)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.sub != sub || len(recs) == 0 {
		if len(recs) > 0 {
			sub.req.Unreserve(len(recs))
		}
		return
	}
	if b.pending == nil {
		b.pending = make(map[string]*pendingHandoff)
	}
	p := &pendingHandoff{sub: sub, recs: recs, sent: sent, reserved: true}
	p.timer = time.AfterFunc(HandoffReserveFor, func() { b.expire(proof, p) })
	b.pending[proof] = p
}

// expire ends an enqueue's reservation, and forgets it once a proof would
// come too late to hand its rows over.
func (b *HandoffBook) expire(proof string, p *pendingHandoff) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.pending[proof] != p {
		return
	}
	if p.reserved {
		p.reserved = false
		p.sub.req.Unreserve(len(p.recs))
	}
	left := time.Until(p.sent.Add(p.sub.req.Lease - p.sub.req.MinLeft))
	if left <= 0 {
		delete(b.pending, proof)
		return
	}
	p.timer = time.AfterFunc(left, func() { b.expire(proof, p) })
}

// Take hands over the rows of the enqueue proof names, its commit now
// proven, with what remains of their reservation. A hand-off that finds less than MinLeft of the lease left (from when
// the statement was sent) is dropped: the rows come back when the lease
// lapses. It reports false when proof names no waiting enqueue.
func (b *HandoffBook) Take(proof string) bool {
	if proof == "" {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	p := b.pending[proof]
	if p == nil {
		return false
	}
	delete(b.pending, proof)
	p.timer.Stop()
	req := p.sub.req
	h := HandedOver{Records: p.recs}
	if p.reserved {
		h.Reserved = len(p.recs)
	}
	if b.sub != p.sub || time.Since(p.sent) > req.Lease-req.MinLeft {
		// The subscription ended (its channel is closed), or too little
		// lease is left to publish within it.
		if h.Reserved > 0 && b.sub == p.sub {
			req.Unreserve(h.Reserved)
		}
		return true
	}
	select {
	case p.sub.out <- h:
	default:
		if h.Reserved > 0 {
			req.Unreserve(h.Reserved)
		}
	}
	return true
}

// Active reports whether a dispatcher subscribed.
func (b *HandoffBook) Active() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sub != nil && b.sub.ctx.Err() == nil
}
