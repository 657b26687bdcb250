package sqlitestoretest

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver/outboxsql"
	"github.com/reliar/reliar/outbox/outboxtest"
	"github.com/reliar/reliar/store/sqlitestore"
)

const selectAll = `SELECT ` + outboxsql.RowColumns + ` FROM outbox ORDER BY sequence`

// stored is how the store keeps times: times are INTEGER microseconds since the Unix epoch.
var stored = outboxsql.TimeCodec[int64]{
	Decode: func(us int64) time.Time { return time.UnixMicro(us).UTC() },
	Encode: func(t time.Time) int64 { return t.UnixMicro() },
}

// EnqueuedTx returns every message of store's outbox that tx sees, in
// sequence (enqueue) order: its own uncommitted messages and the committed
// ones, published and dead ones included.
func EnqueuedTx(ctx context.Context, store *sqlitestore.Store, tx *sql.Tx) ([]reliar.SerializedEnvelope, error) {
	if store == nil || tx == nil {
		return nil, fmt.Errorf("sqlitestoretest: nil store or transaction")
	}
	msgs, err := outboxsql.ReadAll(ctx, tx, selectAll, stored)
	if err != nil {
		return nil, fmt.Errorf("sqlitestoretest: read the outbox: %w", err)
	}
	return msgs, nil
}

// readOK fails t with err, when there is one, and reports whether there
// was none.
func readOK(t outboxtest.TB, err error) bool {
	t.Helper()
	if err != nil {
		t.Errorf("%v", err)
		t.FailNow()
		return false
	}
	return true
}

// RequireEnqueuedTx checks that exactly one message of T's type matching
// opts is in store's outbox as tx sees it, and returns it
// (outboxtest.RequireEnqueued). It fails t when the table cannot be read.
func RequireEnqueuedTx[T reliar.Message](ctx context.Context, t outboxtest.TB, store *sqlitestore.Store, tx *sql.Tx, opts *outboxtest.RequireOpts) *outboxtest.Enqueued[T] {
	t.Helper()
	msgs, err := EnqueuedTx(ctx, store, tx)
	if !readOK(t, err) {
		return nil
	}
	return outboxtest.RequireEnqueued[T](t, msgs, opts)
}

// RequireNotEnqueuedTx checks that no message of T's type matching opts is
// in store's outbox as tx sees it (outboxtest.RequireNotEnqueued).
func RequireNotEnqueuedTx[T reliar.Message](ctx context.Context, t outboxtest.TB, store *sqlitestore.Store, tx *sql.Tx, opts *outboxtest.RequireOpts) {
	t.Helper()
	if msgs, err := EnqueuedTx(ctx, store, tx); readOK(t, err) {
		outboxtest.RequireNotEnqueued[T](t, msgs, opts)
	}
}

// RequireManyEnqueuedTx checks that the messages of the expected types in
// store's outbox, as tx sees them, are exactly expected, in order
// (outboxtest.RequireManyEnqueued).
func RequireManyEnqueuedTx(ctx context.Context, t outboxtest.TB, store *sqlitestore.Store, tx *sql.Tx, expected []outboxtest.Expected) []reliar.SerializedEnvelope {
	t.Helper()
	msgs, err := EnqueuedTx(ctx, store, tx)
	if !readOK(t, err) {
		return nil
	}
	return outboxtest.RequireManyEnqueued(t, msgs, expected)
}
