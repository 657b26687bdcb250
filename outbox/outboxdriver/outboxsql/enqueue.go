package outboxsql

import (
	"context"
	"database/sql"
	"strings"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// InsertColumns are the columns whose values [InsertArgs] encodes, in its
// order: every column of an enqueued row but its times of creation,
// availability and update, which each dialect sets its own way.
const InsertColumns = `id, message_type, message_version, correlation_id, conversation_id,
	causation_id, request_id, content_type, payload, tenant_id, expires_at, ordering_key,
	metadata, headers, metadata_version`

// InsertArity is the number of InsertColumns.
const InsertArity = 15

// InsertArgs appends to args the values of InsertColumns for r, encoding
// expires_at with c.
func InsertArgs[T any](args []any, r *outboxdriver.Row, c TimeCodec[T]) []any {
	payload := r.Payload
	if payload == nil {
		payload = []byte{}
	}
	return append(args,
		r.ID.String(), r.MessageType, r.MessageVersion, NullText(r.CorrelationID), NullUUID(r.ConversationID),
		NullUUID(r.CausationID), NullUUID(r.RequestID), r.ContentType, payload, NullText(r.TenantID),
		c.NullArg(r.ExpiresAt), NullText(r.OrderingKey), BytesText(r.Metadata), BytesText(r.Headers),
		IntOrNull(r.MetadataVersion))
}

// Insert is a dialect's multi-row INSERT of outbox rows: Statement followed
// by one Group of values a row, within the dialect's limits.
type Insert struct {
	// Statement is the INSERT up to its VALUES keyword included.
	Statement string
	// Group is the values of one row, such as "(?,?,?)".
	Group string
	// Arity is the number of parameters in Group.
	Arity int
	// MaxParams is the most parameters one statement may carry.
	MaxParams int
	// MaxBytes caps the payload, metadata and headers bytes of one
	// statement; 0 means no cap.
	MaxBytes int
}

// ChunkLen is how many of rows the next statement carries: at least one,
// within MaxParams and MaxBytes.
func (in *Insert) ChunkLen(rows []outboxdriver.Row) int {
	size := 0
	for i, r := range rows {
		size += len(r.Payload) + len(r.Metadata) + len(r.Headers)
		if i > 0 && ((in.MaxBytes > 0 && size > in.MaxBytes) || (i+1)*in.Arity > in.MaxParams) {
			return i
		}
	}
	return len(rows)
}

// Exec writes rows in tx with as few statements as the limits allow; args
// appends the Arity parameters of one row. When a statement fails, Exec
// stops and returns the rows of that statement with the driver's error.
func (in *Insert) Exec(ctx context.Context, tx *sql.Tx, rows []outboxdriver.Row,
	args func([]any, *outboxdriver.Row) []any) (failed []outboxdriver.Row, err error) {
	for len(rows) > 0 {
		chunk := rows[:in.ChunkLen(rows)]
		var b strings.Builder
		b.WriteString(in.Statement)
		vals := make([]any, 0, len(chunk)*in.Arity)
		for i := range chunk {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(in.Group)
			vals = args(vals, &chunk[i])
		}
		if _, err := tx.ExecContext(ctx, b.String(), vals...); err != nil {
			return chunk, err
		}
		rows = rows[len(chunk):]
	}
	return nil, nil
}

// Duplicate reports an insert that failed on a reused id, cause being the
// store's error: lookup, a query of one column run in tx with args, finds
// the id among those of the failed rows when the transaction still allows.
func Duplicate(ctx context.Context, tx *sql.Tx, lookup string, args []any, cause error) *outboxdriver.DuplicateIDError {
	var found string
	if tx.QueryRowContext(ctx, lookup, args...).Scan(&found) == nil {
		if id, err := reliar.ParseMessageID(found); err == nil {
			return &outboxdriver.DuplicateIDError{ID: id, Err: cause}
		}
	}
	return &outboxdriver.DuplicateIDError{Err: cause}
}
