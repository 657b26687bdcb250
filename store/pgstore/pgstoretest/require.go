package pgstoretest

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver/outboxsql"
	"github.com/reliar/reliar/outbox/outboxtest"
	"github.com/reliar/reliar/store/pgstore"
)

// columns are outboxsql.RowColumns as PostgreSQL hands them to its Raw:
// uuids and JSON documents as text.
const columns = `sequence, id::text, message_type, message_version, correlation_id,
	conversation_id::text, causation_id::text, request_id::text, content_type, payload, tenant_id,
	expires_at, ordering_key, metadata::text, headers::text, metadata_version, created_at,
	available_at, attempts`

var timestamptz = outboxsql.TimeCodec[time.Time]{Decode: time.Time.UTC, Encode: time.Time.UTC}

func selectAll(store *pgstore.Store) string {
	return `SELECT ` + columns + ` FROM ` + pgx.Identifier{store.Schema(), "outbox"}.Sanitize() + ` ORDER BY sequence`
}

// EnqueuedTx returns every message of store's outbox that tx sees, in
// sequence (enqueue) order: its own uncommitted messages and the committed
// ones, published and dead ones included.
func EnqueuedTx(ctx context.Context, store *pgstore.Store, tx pgx.Tx) ([]reliar.SerializedEnvelope, error) {
	if store == nil || tx == nil {
		return nil, fmt.Errorf("pgstoretest: nil store or transaction")
	}
	rows, err := tx.Query(ctx, selectAll(store))
	if err != nil {
		return nil, fmt.Errorf("pgstoretest: read the outbox: %w", err)
	}
	defer rows.Close()
	msgs, err := outboxsql.DecodeAll(rows, timestamptz)
	if err != nil {
		return nil, fmt.Errorf("pgstoretest: read the outbox: %w", err)
	}
	return msgs, nil
}

// EnqueuedSQLTx is EnqueuedTx for a *sql.Tx.
func EnqueuedSQLTx(ctx context.Context, store *pgstore.Store, tx *sql.Tx) ([]reliar.SerializedEnvelope, error) {
	if store == nil || tx == nil {
		return nil, fmt.Errorf("pgstoretest: nil store or transaction")
	}
	msgs, err := outboxsql.ReadAll(ctx, tx, selectAll(store), timestamptz)
	if err != nil {
		return nil, fmt.Errorf("pgstoretest: read the outbox: %w", err)
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
func RequireEnqueuedTx[T reliar.Message](ctx context.Context, t outboxtest.TB, store *pgstore.Store, tx pgx.Tx, opts *outboxtest.RequireOpts) *outboxtest.Enqueued[T] {
	t.Helper()
	msgs, err := EnqueuedTx(ctx, store, tx)
	if !readOK(t, err) {
		return nil
	}
	return outboxtest.RequireEnqueued[T](t, msgs, opts)
}

// RequireNotEnqueuedTx checks that no message of T's type matching opts is
// in store's outbox as tx sees it (outboxtest.RequireNotEnqueued).
func RequireNotEnqueuedTx[T reliar.Message](ctx context.Context, t outboxtest.TB, store *pgstore.Store, tx pgx.Tx, opts *outboxtest.RequireOpts) {
	t.Helper()
	if msgs, err := EnqueuedTx(ctx, store, tx); readOK(t, err) {
		outboxtest.RequireNotEnqueued[T](t, msgs, opts)
	}
}

// RequireManyEnqueuedTx checks that the messages of the expected types in
// store's outbox, as tx sees them, are exactly expected, in order
// (outboxtest.RequireManyEnqueued).
func RequireManyEnqueuedTx(ctx context.Context, t outboxtest.TB, store *pgstore.Store, tx pgx.Tx, expected []outboxtest.Expected) []reliar.SerializedEnvelope {
	t.Helper()
	msgs, err := EnqueuedTx(ctx, store, tx)
	if !readOK(t, err) {
		return nil
	}
	return outboxtest.RequireManyEnqueued(t, msgs, expected)
}

// RequireEnqueuedSQLTx is RequireEnqueuedTx for a *sql.Tx.
func RequireEnqueuedSQLTx[T reliar.Message](ctx context.Context, t outboxtest.TB, store *pgstore.Store, tx *sql.Tx, opts *outboxtest.RequireOpts) *outboxtest.Enqueued[T] {
	t.Helper()
	msgs, err := EnqueuedSQLTx(ctx, store, tx)
	if !readOK(t, err) {
		return nil
	}
	return outboxtest.RequireEnqueued[T](t, msgs, opts)
}

// RequireNotEnqueuedSQLTx is RequireNotEnqueuedTx for a *sql.Tx.
func RequireNotEnqueuedSQLTx[T reliar.Message](ctx context.Context, t outboxtest.TB, store *pgstore.Store, tx *sql.Tx, opts *outboxtest.RequireOpts) {
	t.Helper()
	if msgs, err := EnqueuedSQLTx(ctx, store, tx); readOK(t, err) {
		outboxtest.RequireNotEnqueued[T](t, msgs, opts)
	}
}

// RequireManyEnqueuedSQLTx is RequireManyEnqueuedTx for a *sql.Tx.
func RequireManyEnqueuedSQLTx(ctx context.Context, t outboxtest.TB, store *pgstore.Store, tx *sql.Tx, expected []outboxtest.Expected) []reliar.SerializedEnvelope {
	t.Helper()
	msgs, err := EnqueuedSQLTx(ctx, store, tx)
	if !readOK(t, err) {
		return nil
	}
	return outboxtest.RequireManyEnqueued(t, msgs, expected)
}
