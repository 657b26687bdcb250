package sqlitestore

import (
	"context"
	"database/sql"
	"errors"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
	"github.com/reliar/reliar/outbox/outboxdriver/outboxsql"
)

// insert is the multi-row INSERT of Enqueue: the shared columns, then
// created_at, available_at and updated_at from the store's clock.
var insert = outboxsql.Insert{
	Statement: "INSERT INTO outbox (" + outboxsql.InsertColumns + ", created_at, available_at, updated_at) VALUES ",
	Group:     "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
	Arity:     outboxsql.InsertArity + 3,
	// SQLite's default limit on the parameters of one statement
	// (SQLITE_MAX_VARIABLE_NUMBER since 3.32).
	MaxParams: 32766,
}

// ErrNilTx is returned by Enqueue and by the inbox's MarkProcessed when they
// are given no transaction.
var ErrNilTx = errors.New("sqlitestore: a transaction is required")

// Enqueue writes msgs to the outbox inside tx, the caller's transaction, so
// that they commit or roll back with the business change. It takes only a
// *sql.Tx on the store's database: a handle or connection would autocommit
// and break the guarantee. Any number of messages of mixed types are written
// with multi-row INSERTs. It returns their ids, in order.
//
// Every message is encoded before anything is written: a payload over the
// store's limit fails with a *outboxdriver.PayloadTooLargeError and writes nothing.
// A reused id fails with a *outboxdriver.DuplicateIDError; the transaction stays
// usable (SQLite undoes only the failed statement) but the caller normally
// rolls it back.
func (s *Store) Enqueue(ctx context.Context, tx *sql.Tx, msgs ...reliar.Outgoing) ([]reliar.MessageID, error) {
	if tx == nil {
		return nil, ErrNilTx
	}
	if len(msgs) == 0 {
		return nil, nil
	}
	rows, ids, err := s.cfg.Encode(ctx, msgs)
	if err != nil {
		return nil, err
	}
	now := s.clock()
	failed, err := insert.Exec(ctx, tx, rows, func(args []any, r *outboxdriver.Row) []any {
		available := now
		if r.AvailableAt != nil {
			available = toMicros(*r.AvailableAt)
		}
		return append(outboxsql.InsertArgs(args, r, micros), now, available, now)
	})
	if err != nil {
		return nil, duplicateOr(ctx, tx, failed, err)
	}
	return ids, nil
}

// duplicateOr turns a unique-constraint failure of an insert into a
// *outboxdriver.DuplicateIDError naming the reused id, and any other error into an
// *Error.
func duplicateOr(ctx context.Context, tx *sql.Tx, rows []outboxdriver.Row, err error) error {
	wrapped := wrapErr("enqueue", err)
	if sqliteCode(err) != constraintUnique {
		return wrapped
	}
	ids := make([]reliar.MessageID, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	lookup := `SELECT id FROM outbox WHERE id IN (SELECT value FROM json_each(?)) LIMIT 1`
	return outboxsql.Duplicate(ctx, tx, lookup, []any{idArg(ids)}, wrapped)
}
