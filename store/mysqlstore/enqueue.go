package mysqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox"
)

// insertColumns are the columns Enqueue writes; created_at, available_at (when
// the message is due at once) and updated_at come from the server clock.
const insertColumns = `id, message_type, message_version, correlation_id, conversation_id,
	causation_id, request_id, content_type, payload, tenant_id, expires_at, ordering_key,
	metadata, headers, metadata_version, available_at, created_at, updated_at`

// insertGroup is one row of values: 16 parameters and the server clock.
const insertGroup = `(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,COALESCE(?, UTC_TIMESTAMP(6)),UTC_TIMESTAMP(6),UTC_TIMESTAMP(6))`

// insertArity is the number of parameters of insertGroup.
const insertArity = 16

// maxParams is the server's limit on the parameters of one prepared
// statement.
const maxParams = 65535

// maxChunkBytes caps the payload bytes of one INSERT, well under the default
// max_allowed_packet (16 MiB).
const maxChunkBytes = 4 << 20

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
// store's limit fails with a *outbox.PayloadTooLargeError and writes nothing.
// A reused id fails with a *outbox.DuplicateIDError; the caller then rolls
// the transaction back.
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
			return nil, fmt.Errorf("mysqlstore: enqueue: %w", err)
		}
		if _, dup := seen[r.ID]; dup {
			return nil, &outbox.DuplicateIDError{ID: r.ID}
		}
		seen[r.ID] = struct{}{}
		rows[i], ids[i] = r, r.ID
	}
	for len(rows) > 0 {
		n := chunkLen(rows)
		if err := insertRows(ctx, tx, rows[:n]); err != nil {
			return nil, duplicateOr(ctx, tx, rows[:n], err)
		}
		rows = rows[n:]
	}
	return ids, nil
}

// chunkLen is how many of rows the next INSERT carries: at least one, within
// the parameter limit and maxChunkBytes of payload.
func chunkLen(rows []outbox.Row) int {
	size := 0
	for i, r := range rows {
		size += len(r.Payload) + len(r.Metadata) + len(r.Headers)
		if i > 0 && (size > maxChunkBytes || (i+1)*insertArity > maxParams) {
			return i
		}
	}
	return len(rows)
}

// insertRows writes rows with one multi-row INSERT.
func insertRows(ctx context.Context, tx *sql.Tx, rows []outbox.Row) error {
	var b strings.Builder
	b.WriteString("INSERT INTO outbox (" + insertColumns + ") VALUES ")
	args := make([]any, 0, len(rows)*insertArity)
	for i, r := range rows {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(insertGroup)
		payload := r.Payload
		if payload == nil {
			payload = []byte{}
		}
		args = append(args,
			r.ID.String(), r.MessageType, r.MessageVersion, nullText(r.CorrelationID), nullUUID(r.ConversationID),
			nullUUID(r.CausationID), nullUUID(r.RequestID), r.ContentType, payload, nullText(r.TenantID),
			nullTimeArg(r.ExpiresAt), nullText(r.OrderingKey), bytesText(r.Metadata), bytesText(r.Headers),
			intOrNull(r.MetadataVersion), nullTimeArg(r.AvailableAt))
	}
	_, err := tx.ExecContext(ctx, b.String(), args...)
	return err
}

// duplicateOr turns a duplicate-key failure of an insert into a
// *outbox.DuplicateIDError naming the reused id, and any other error into an
// *Error. MariaDB undoes only the failed statement, so the transaction can
// still look the id up.
func duplicateOr(ctx context.Context, tx *sql.Tx, rows []outbox.Row, err error) error {
	wrapped := wrapErr("enqueue", err)
	if serverNumber(err) != errDupEntry {
		return wrapped
	}
	args := make([]any, len(rows))
	for i, r := range rows {
		args[i] = r.ID.String()
	}
	var found string
	lookup := `SELECT id FROM outbox WHERE id IN (` + placeholders(len(rows)) + `) LIMIT 1`
	if tx.QueryRowContext(ctx, lookup, args...).Scan(&found) == nil {
		if id, perr := reliar.ParseMessageID(found); perr == nil {
			return &outbox.DuplicateIDError{ID: id, Err: wrapped}
		}
	}
	return &outbox.DuplicateIDError{Err: wrapped}
}

// bytesText encodes a JSON document as text: NULL when empty.
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
