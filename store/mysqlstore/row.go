package mysqlstore

import (
	"database/sql"
	"time"

	"github.com/google/uuid"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox"
)

// rowColumns are the columns scanRaw reads, in its order.
const rowColumns = `sequence, id, message_type, message_version, correlation_id,
	conversation_id, causation_id, request_id, content_type, payload, tenant_id,
	expires_at, ordering_key, metadata, headers, metadata_version, created_at,
	available_at, attempts`

// rawRow holds the columns of rowColumns as stored.
type rawRow struct {
	sequence        int64
	id              string
	messageType     string
	messageVersion  int64
	correlationID   sql.NullString
	conversationID  sql.NullString
	causationID     sql.NullString
	requestID       sql.NullString
	contentType     string
	payload         []byte
	tenantID        sql.NullString
	expiresAt       sql.NullTime
	orderingKey     sql.NullString
	metadata        sql.NullString
	headers         sql.NullString
	metadataVersion sql.NullInt64
	createdAt       time.Time
	availableAt     time.Time
	attempts        int64
}

// scanner is a *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

// scanRaw reads the columns of rowColumns, followed by extra destinations.
func scanRaw(sc scanner, extra ...any) (rawRow, error) {
	var r rawRow
	dest := append([]any{
		&r.sequence, &r.id, &r.messageType, &r.messageVersion, &r.correlationID,
		&r.conversationID, &r.causationID, &r.requestID, &r.contentType, &r.payload, &r.tenantID,
		&r.expiresAt, &r.orderingKey, &r.metadata, &r.headers, &r.metadataVersion, &r.createdAt,
		&r.availableAt, &r.attempts,
	}, extra...)
	err := sc.Scan(dest...)
	return r, err
}

// messageID parses the row's id; uuid.Nil when it is not a UUID.
func (r *rawRow) messageID() reliar.MessageID {
	id, err := uuid.Parse(r.id)
	if err != nil {
		return uuid.Nil
	}
	return id
}

// decode turns the stored columns into an envelope. Any failure, a column
// that is not a UUID included, is a *outbox.DecodeError: the row is poison.
func (r *rawRow) decode() (reliar.SerializedEnvelope, error) {
	id, err := uuid.Parse(r.id)
	if err != nil {
		return reliar.SerializedEnvelope{}, &outbox.DecodeError{Reason: "id is not a UUID: " + err.Error()}
	}
	row := outbox.Row{
		ID:             id,
		Sequence:       r.sequence,
		MessageType:    r.messageType,
		MessageVersion: int(r.messageVersion),
		ContentType:    r.contentType,
		Payload:        r.payload,
		CorrelationID:  nullString(r.correlationID),
		TenantID:       nullString(r.tenantID),
		ExpiresAt:      nullTime(r.expiresAt),
		OrderingKey:    nullString(r.orderingKey),
		CreatedAt:      r.createdAt.UTC(),
		Attempts:       int(r.attempts),
	}
	if row.Payload == nil {
		row.Payload = []byte{}
	}
	if r.metadata.Valid {
		row.Metadata = []byte(r.metadata.String)
	}
	if r.headers.Valid {
		row.Headers = []byte(r.headers.String)
	}
	if r.metadataVersion.Valid {
		v := int(r.metadataVersion.Int64)
		row.MetadataVersion = &v
	}
	at := r.availableAt.UTC()
	row.AvailableAt = &at
	for _, c := range []struct {
		name string
		src  sql.NullString
		dst  **uuid.UUID
	}{
		{"conversation_id", r.conversationID, &row.ConversationID},
		{"causation_id", r.causationID, &row.CausationID},
		{"request_id", r.requestID, &row.RequestID},
	} {
		if !c.src.Valid {
			continue
		}
		u, err := uuid.Parse(c.src.String)
		if err != nil {
			return reliar.SerializedEnvelope{}, &outbox.DecodeError{ID: id, Reason: c.name + " is not a UUID: " + err.Error()}
		}
		*c.dst = &u
	}
	return row.Envelope()
}

// nullTime decodes a nullable stored time, in UTC.
func nullTime(v sql.NullTime) *time.Time {
	if !v.Valid {
		return nil
	}
	t := v.Time.UTC()
	return &t
}

// nullTimeArg encodes a nullable time in UTC with microsecond precision.
func nullTimeArg(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UTC().Truncate(time.Microsecond)
}

func nullString(v sql.NullString) *string {
	if !v.Valid {
		return nil
	}
	return &v.String
}

// nullText encodes an optional string: NULL when nil.
func nullText(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

// nullUUID encodes an optional UUID as canonical text: NULL when nil.
func nullUUID(u *uuid.UUID) any {
	if u == nil {
		return nil
	}
	return u.String()
}

// micros is a duration in whole microseconds, for INTERVAL ? MICROSECOND.
func micros(d time.Duration) int64 { return d.Microseconds() }
