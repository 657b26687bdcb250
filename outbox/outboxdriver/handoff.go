package outboxdriver

import (
	"context"
	"errors"
	"time"
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
	// enqueue, after their commit. The store closes the channel once ctx is
	// done; rows still waiting for their commit's proof then come back
	// after their lease. A store serves one subscription at a time and
	// refuses another with an error.
	Handoff(ctx context.Context, req HandoffRequest) (<-chan []Record, error)
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
	// then on. It is called from producers' goroutines.
	Reserve func(n int) bool
	// Unreserve gives back the room of n reserved rows that will not be
	// handed over (the enqueue failed, the proof came too late or never).
	Unreserve func(n int)
}
