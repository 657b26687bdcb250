package outbox

import (
	"context"

	"github.com/reliar/reliar"
)

// Enqueuer writes messages into the outbox inside the caller's transaction
// of type Tx: the dependency a handler takes instead of a concrete store, so
// that its tests can hand it a fake (outboxtest.FakeEnqueuer) or the real
// store. pgstore.Store is an Enqueuer[pgx.Tx]; sqlitestore.Store and
// mysqlstore.Store are Enqueuer[*sql.Tx].
//
// Tx is a transaction type, never a pool or a connection: a message must
// commit with the business change that caused it or not at all.
type Enqueuer[Tx any] interface {
	// Enqueue writes msgs inside tx and returns their ids in order.
	Enqueue(ctx context.Context, tx Tx, msgs ...reliar.Outgoing) ([]reliar.MessageID, error)
}
