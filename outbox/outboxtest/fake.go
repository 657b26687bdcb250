package outboxtest

import (
	"context"
	"fmt"
	"sync"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/outbox/memstore"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// FakeEnqueuer is an outbox.Enqueuer[Tx] for unit tests of code that
// enqueues: it encodes each message as a store would (defaults filled, body
// serialized, payload limit checked) and records it with the transaction it
// was given, which it never uses. It is safe for concurrent use; the zero
// value is ready.
//
// It knows nothing of commits and rollbacks: it records every call that
// succeeds. Code whose rollback path matters is tested against a real store
// with the stores' test kits.
type FakeEnqueuer[Tx any] struct {
	// Store, when set, also receives every message (encoded with the
	// store's own serializer), so that Drain can publish what the code
	// under test enqueued.
	Store *memstore.Store
	// Serializer encodes bodies. Defaults to reliar.JSON.
	Serializer reliar.Serializer
	// Err, when set, is returned by every Enqueue, which then records
	// nothing: the database failing under the code under test.
	Err error

	mu    sync.Mutex
	seq   int64 // the last sequence given, as a store numbers its rows
	calls []EnqueueCall[Tx]
}

// EnqueueCall is one successful call of FakeEnqueuer.Enqueue.
type EnqueueCall[Tx any] struct {
	Tx       Tx
	Messages []reliar.SerializedEnvelope
}

var _ outbox.Enqueuer[struct{}] = (*FakeEnqueuer[struct{}])(nil)

// Enqueue records msgs with tx and returns their ids; with Store set, it
// enqueues them there too.
func (f *FakeEnqueuer[Tx]) Enqueue(ctx context.Context, tx Tx, msgs ...reliar.Outgoing) ([]reliar.MessageID, error) {
	if f.Err != nil {
		return nil, f.Err
	}
	msgs = append([]reliar.Outgoing(nil), msgs...) // ids are filled in below
	call := EnqueueCall[Tx]{Tx: tx, Messages: make([]reliar.SerializedEnvelope, len(msgs))}
	ids := make([]reliar.MessageID, len(msgs))
	for i, m := range msgs {
		row, err := outboxdriver.NewRow(ctx, m, f.Serializer, 0)
		if err != nil {
			return nil, fmt.Errorf("outboxtest: enqueue message %d of %d: %w", i+1, len(msgs), err)
		}
		env, err := row.Envelope()
		if err != nil {
			return nil, fmt.Errorf("outboxtest: enqueue message %d of %d: %w", i+1, len(msgs), err)
		}
		call.Messages[i] = env
		ids[i] = env.ID
		msgs[i].ID = env.ID // the store below keeps the ids returned
	}
	if f.Store != nil {
		if _, err := f.Store.Enqueue(ctx, msgs...); err != nil {
			return nil, err
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range call.Messages {
		f.seq++
		call.Messages[i].Sequence = f.seq
	}
	f.calls = append(f.calls, call)
	return ids, nil
}

// Calls returns the successful calls so far, in order.
func (f *FakeEnqueuer[Tx]) Calls() []EnqueueCall[Tx] {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]EnqueueCall[Tx](nil), f.calls...)
}

// Enqueued returns every message recorded so far, in enqueue order: what
// RequireEnqueued, RequireNotEnqueued and RequireManyEnqueued check.
func (f *FakeEnqueuer[Tx]) Enqueued() []reliar.SerializedEnvelope {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []reliar.SerializedEnvelope
	for _, c := range f.calls {
		out = append(out, c.Messages...)
	}
	return out
}
