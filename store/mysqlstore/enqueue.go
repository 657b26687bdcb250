package mysqlstore

import (
	"context"
	"database/sql"
	"errors"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
	"github.com/reliar/reliar/outbox/outboxdriver/outboxsql"
)

// insert is the multi-row INSERT of Enqueue: the shared columns, then
// available_at (the server clock when the message is due at once),
// created_at and updated_at from the server clock.
var insert = outboxsql.Insert{
	Statement: "INSERT INTO outbox (" + outboxsql.InsertColumns + ", available_at, created_at, updated_at) VALUES ",
	Group:     "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,COALESCE(?, UTC_TIMESTAMP(6)),UTC_TIMESTAMP(6),UTC_TIMESTAMP(6))",
	Arity:     outboxsql.InsertArity + 1,
	// The server's limit on the parameters of one prepared statement.
	MaxParams: 65535,
	// Well under the default max_allowed_packet (16 MiB).
	MaxBytes: 4 << 20,
}

// ErrNilTx is returned by Enqueue and by the inbox's MarkProcessed when they
// are given no transaction.
var ErrNilTx = errors.New("mysqlstore: a transaction is required")

// Enqueue writes msgs to the outbox inside tx, the caller's transaction, so
// that they commit or roll back with the business change. It takes only a
// *sql.Tx on the store's database: a handle or connection would autocommit
// and break the guarantee. Any number of messages of mixed types are written
// with multi-row INSERTs. It returns their ids, in order.
//
// Every message is encoded before anything is written: a payload over the
// store's limit fails with a *outboxdriver.PayloadTooLargeError and writes nothing.
// A reused id fails with a *outboxdriver.DuplicateIDError; the caller then rolls
// the transaction back.
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
	failed, err := insert.Exec(ctx, tx, rows, func(args []any, r *outboxdriver.Row) []any {
		return append(outboxsql.InsertArgs(args, r, datetime), datetime.NullArg(r.AvailableAt))
	})
	if err != nil {
		return nil, duplicateOr(ctx, tx, failed, err)
	}
	return ids, nil
}

// duplicateOr turns a duplicate-key failure of an insert into a
// *outboxdriver.DuplicateIDError naming the reused id, and any other error into an
// *Error. MariaDB undoes only the failed statement, so the transaction can
// still look the id up.
func duplicateOr(ctx context.Context, tx *sql.Tx, rows []outboxdriver.Row, err error) error {
	wrapped := wrapErr("enqueue", err)
	if serverNumber(err) != errDupEntry {
		return wrapped
	}
	args := make([]any, len(rows))
	for i, r := range rows {
		args[i] = r.ID.String()
	}
	lookup := `SELECT id FROM outbox WHERE id IN (` + placeholders(len(rows)) + `) LIMIT 1`
	return outboxsql.Duplicate(ctx, tx, lookup, args, wrapped)
}
