package outboxsql

import (
	"database/sql"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// RowColumns are the columns [Raw.Scan] reads, in its order.
const RowColumns = `sequence, id, message_type, message_version, correlation_id,
	conversation_id, causation_id, request_id, content_type, payload, tenant_id,
	expires_at, ordering_key, metadata, headers, metadata_version, created_at,
	available_at, attempts`

// TimeCodec is how a dialect stores a time: as a T, such as microseconds
// since the Unix epoch (int64) or a DATETIME (time.Time).
type TimeCodec[T any] struct {
	// Decode turns a stored time into a time.Time in UTC.
	Decode func(T) time.Time
	// Encode turns a time into its stored form.
	Encode func(time.Time) T
}

// Null decodes a nullable stored time: nil for NULL.
func (c TimeCodec[T]) Null(v sql.Null[T]) *time.Time {
	if !v.Valid {
		return nil
	}
	t := c.Decode(v.V)
	return &t
}

// NullArg encodes an optional time as a statement argument: NULL when nil.
func (c TimeCodec[T]) NullArg(t *time.Time) any {
	if t == nil {
		return nil
	}
	return c.Encode(*t)
}

// Raw holds the columns of RowColumns as stored, times as T.
type Raw[T any] struct {
	Sequence        int64
	ID              string
	MessageType     string
	MessageVersion  int64
	CorrelationID   sql.NullString
	ConversationID  sql.NullString
	CausationID     sql.NullString
	RequestID       sql.NullString
	ContentType     string
	Payload         []byte
	TenantID        sql.NullString
	ExpiresAt       sql.Null[T]
	OrderingKey     sql.NullString
	Metadata        sql.NullString
	Headers         sql.NullString
	MetadataVersion sql.NullInt64
	CreatedAt       T
	AvailableAt     T
	Attempts        int64
}

// Scanner is a *sql.Row or *sql.Rows.
type Scanner interface{ Scan(dest ...any) error }

// Scan reads the columns of RowColumns into r, followed by extra
// destinations.
func (r *Raw[T]) Scan(sc Scanner, extra ...any) error {
	dest := append([]any{
		&r.Sequence, &r.ID, &r.MessageType, &r.MessageVersion, &r.CorrelationID,
		&r.ConversationID, &r.CausationID, &r.RequestID, &r.ContentType, &r.Payload, &r.TenantID,
		&r.ExpiresAt, &r.OrderingKey, &r.Metadata, &r.Headers, &r.MetadataVersion, &r.CreatedAt,
		&r.AvailableAt, &r.Attempts,
	}, extra...)
	return sc.Scan(dest...)
}

// MessageID parses the row's id; uuid.Nil when it is not a UUID.
func (r *Raw[T]) MessageID() reliar.MessageID {
	id, err := uuid.Parse(r.ID)
	if err != nil {
		return uuid.Nil
	}
	return id
}

// Decode turns the stored columns into an envelope, reading times with c.
// Any failure, a column that is not a UUID or an id that is not in the
// canonical lower-case form included, is a *outboxdriver.DecodeError: the
// row is poison.
func (r *Raw[T]) Decode(c TimeCodec[T]) (reliar.SerializedEnvelope, error) {
	row, err := r.Row(c)
	if err != nil {
		return reliar.SerializedEnvelope{}, err
	}
	return row.Envelope()
}

// Row turns the stored columns into an outboxdriver.Row, reading times with
// c, without decoding its documents. A column that is not a UUID is a
// *outboxdriver.DecodeError.
func (r *Raw[T]) Row(c TimeCodec[T]) (outboxdriver.Row, error) {
	id, err := uuid.Parse(r.ID)
	if err != nil {
		return outboxdriver.Row{}, &outboxdriver.DecodeError{Reason: "id is not a UUID: " + err.Error()}
	}
	if id.String() != r.ID {
		// Outcome writes name the row by its canonical id: a row stored in
		// another form would be published again at every lease.
		return outboxdriver.Row{}, &outboxdriver.DecodeError{ID: id, Reason: "id " + strconv.Quote(r.ID) + " is not a canonical lower-case UUID"}
	}
	at := c.Decode(r.AvailableAt)
	row := outboxdriver.Row{
		ID:             id,
		Sequence:       r.Sequence,
		MessageType:    r.MessageType,
		MessageVersion: int(r.MessageVersion),
		ContentType:    r.ContentType,
		Payload:        r.Payload,
		CorrelationID:  nullString(r.CorrelationID),
		TenantID:       nullString(r.TenantID),
		ExpiresAt:      c.Null(r.ExpiresAt),
		OrderingKey:    nullString(r.OrderingKey),
		AvailableAt:    &at,
		CreatedAt:      c.Decode(r.CreatedAt),
		Attempts:       int(r.Attempts),
	}
	if row.Payload == nil {
		row.Payload = []byte{}
	}
	if r.Metadata.Valid {
		row.Metadata = []byte(r.Metadata.String)
	}
	if r.Headers.Valid {
		row.Headers = []byte(r.Headers.String)
	}
	if r.MetadataVersion.Valid {
		v := int(r.MetadataVersion.Int64)
		row.MetadataVersion = &v
	}
	for _, col := range []struct {
		name string
		src  sql.NullString
		dst  **uuid.UUID
	}{
		{"conversation_id", r.ConversationID, &row.ConversationID},
		{"causation_id", r.CausationID, &row.CausationID},
		{"request_id", r.RequestID, &row.RequestID},
	} {
		if !col.src.Valid {
			continue
		}
		u, err := uuid.Parse(col.src.String)
		if err != nil {
			return outboxdriver.Row{}, &outboxdriver.DecodeError{ID: id, Reason: col.name + " is not a UUID: " + err.Error()}
		}
		*col.dst = &u
	}
	return row, nil
}

func nullString(v sql.NullString) *string {
	if !v.Valid {
		return nil
	}
	return &v.String
}
