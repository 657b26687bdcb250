package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox"
)

// insertColumns are the columns Enqueue writes.
const insertColumns = `id, message_type, message_version, correlation_id, conversation_id,
	causation_id, request_id, content_type, payload, tenant_id, expires_at, ordering_key,
	metadata, headers, metadata_version, created_at, available_at, updated_at`

// insertArity is the number of insertColumns.
const insertArity = 18

// maxParams is SQLite's default limit on the parameters of one statement
// (SQLITE_MAX_VARIABLE_NUMBER since 3.32).
const maxParams = 32766

// insertChunk is the most rows one INSERT carries.
const insertChunk = maxParams / insertArity

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
// store's limit fails with a *outbox.PayloadTooLargeError and writes nothing.
// A reused id fails with a *outbox.DuplicateIDError; the transaction stays
// usable (SQLite undoes only the failed statement) but the caller normally
// rolls it back.
func (s *Store) Enqueue(ctx context.Context, tx *sql.Tx, msgs ...reliar.Outgoing) ([]reliar.MessageID, error) {
	if tx == nil {
		return nil, ErrNilTx
	}
	if len(msgs) == 0 {
		return nil, nil
	}
	rows := make([]outbox.Row, len(msgs))
	ids := make([]reliar.MessageID, len(msgs))
	seen := make(map[reliar.MessageID]struct{}, len(msgs))
	for i, m := range msgs {
		r, err := outbox.NewRow(ctx, m, s.serializer, s.maxPayload)
		if err != nil {
			return nil, fmt.Errorf("sqlitestore: enqueue: %w", err)
		}
		if _, dup := seen[r.ID]; dup {
			return nil, &outbox.DuplicateIDError{ID: r.ID}
		}
		seen[r.ID] = struct{}{}
		rows[i], ids[i] = r, r.ID
	}
	now := s.clock()
	for start := 0; start < len(rows); start += insertChunk {
		chunk := rows[start:min(start+insertChunk, len(rows))]
		if err := insertRows(ctx, tx, chunk, now); err != nil {
			return nil, duplicateOr(ctx, tx, chunk, err)
		}
	}
	return ids, nil
}

// insertRows writes rows with one multi-row INSERT.
func insertRows(ctx context.Context, tx *sql.Tx, rows []outbox.Row, now int64) error {
	var b strings.Builder
	b.WriteString("INSERT INTO outbox (" + insertColumns + ") VALUES ")
	const group = "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
	args := make([]any, 0, len(rows)*insertArity)
	for i, r := range rows {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(group)
		available := now
		if r.AvailableAt != nil {
			available = toMicros(*r.AvailableAt)
		}
		payload := r.Payload
		if payload == nil {
			payload = []byte{}
		}
		args = append(args,
			r.ID.String(), r.MessageType, r.MessageVersion, nullText(r.CorrelationID), nullUUID(r.ConversationID),
			nullUUID(r.CausationID), nullUUID(r.RequestID), r.ContentType, payload, nullText(r.TenantID),
			nullMicros(r.ExpiresAt), nullText(r.OrderingKey), bytesText(r.Metadata), bytesText(r.Headers),
			intOrNull(r.MetadataVersion), now, available, now)
	}
	_, err := tx.ExecContext(ctx, b.String(), args...)
	return err
}

// duplicateOr turns a unique-constraint failure of an insert into a
// *outbox.DuplicateIDError naming the reused id, and any other error into an
// *Error.
func duplicateOr(ctx context.Context, tx *sql.Tx, rows []outbox.Row, err error) error {
	wrapped := wrapErr("enqueue", err)
	if sqliteCode(err) != constraintUnique {
		return wrapped
	}
	ids := make([]reliar.MessageID, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	var found string
	lookup := `SELECT id FROM outbox WHERE id IN (SELECT value FROM json_each(?)) LIMIT 1`
	if tx.QueryRowContext(ctx, lookup, idArg(ids)).Scan(&found) == nil {
		if id, perr := reliar.ParseMessageID(found); perr == nil {
			return &outbox.DuplicateIDError{ID: id, Err: wrapped}
		}
	}
	return &outbox.DuplicateIDError{Err: wrapped}
}

// bytesText encodes a JSON document as TEXT: NULL when empty.
func bytesText(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return string(b)
}

// intOrNull encodes an optional integer.
func intOrNull(v *int) any {
	if v == nil {
		return nil
	}
	return *v
}
