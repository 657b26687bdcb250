package pgstore

import (
	"database/sql/driver"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/reliar/reliar/outbox"
)

// jsonDoc is a JSON document sent as jsonb; nil is SQL NULL.
type jsonDoc []byte

// Value implements driver.Valuer: pgx sends the text of the document.
func (d jsonDoc) Value() (driver.Value, error) {
	if d == nil {
		return nil, nil
	}
	return string(d), nil
}

func text(s *string) pgtype.Text {
	if s == nil {
		return pgtype.Text{}
	}
	return pgtype.Text{String: *s, Valid: true}
}

func uuidArg(id *uuid.UUID) pgtype.UUID {
	if id == nil {
		return pgtype.UUID{}
	}
	return pgtype.UUID{Bytes: *id, Valid: true}
}

func timestamptz(t *time.Time) pgtype.Timestamptz {
	if t == nil {
		return pgtype.Timestamptz{}
	}
	return pgtype.Timestamptz{Time: *t, Valid: true}
}

// leaseArgs splits leases into the id and token arrays of the fenced
// outcome statements.
func leaseArgs(leases []outbox.Lease) ([]pgtype.UUID, []pgtype.UUID) {
	ids := make([]pgtype.UUID, len(leases))
	tokens := make([]pgtype.UUID, len(leases))
	for i, l := range leases {
		ids[i] = pgtype.UUID{Bytes: l.ID, Valid: true}
		tokens[i] = pgtype.UUID{Bytes: l.Token, Valid: true}
	}
	return ids, tokens
}

// micros converts a duration to whole microseconds, PostgreSQL's resolution.
func micros(d time.Duration) int64 { return d.Microseconds() }
