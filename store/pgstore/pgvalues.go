package pgstore

import (
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// compactArray returns one array parameter of the enqueue statement's
// multi-argument unnest in the cheapest form to send. With no NULL it is
// the plain values, a slice type pgx encodes without reflection; with only
// NULLs it is an empty array, which unnest pads with NULLs for every row,
// so nothing is encoded or parsed; otherwise vals as they are. Most columns
// of a typical batch are all NULL (causation, tenant, expiry, ordering key,
// headers…) or never NULL (conversation id, metadata version).
func compactArray[T, V any](vals []T, get func(T) (V, bool)) any {
	nulls := 0
	for _, v := range vals {
		if _, ok := get(v); !ok {
			nulls++
		}
	}
	switch nulls {
	case 0:
		plain := make([]V, len(vals))
		for i, v := range vals {
			plain[i], _ = get(v)
		}
		return plain
	case len(vals):
		return []V{}
	}
	return vals
}

func uuidValue(u pgtype.UUID) (pgtype.UUID, bool)      { return u, u.Valid }
func textValue(t pgtype.Text) (string, bool)           { return t.String, t.Valid }
func int4Value(i pgtype.Int4) (int32, bool)            { return i.Int32, i.Valid }
func timeValue(t pgtype.Timestamptz) (time.Time, bool) { return t.Time, t.Valid }
func docValue(d []byte) ([]byte, bool)                 { return d, d != nil }

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
//
// Every uuid array the store sends is a []pgtype.UUID: pgx encodes it
// without reflection, and it is registered as uuid[] in pgx's type map, so
// it also encodes in the query modes that pick a parameter's type from its
// Go type (exec, simple_protocol), where a [][16]byte cannot be encoded.
func leaseArgs(leases []outboxdriver.Lease) ([]pgtype.UUID, []pgtype.UUID) {
	ids := make([]pgtype.UUID, len(leases))
	tokens := make([]pgtype.UUID, len(leases))
	for i, l := range leases {
		ids[i] = pgtype.UUID{Bytes: l.ID, Valid: true}
		tokens[i] = pgtype.UUID{Bytes: l.Token, Valid: true}
	}
	return ids, tokens
}

// uuidsArg returns vals as the uuid array the store sends (leaseArgs).
func uuidsArg(vals [][16]byte) []pgtype.UUID {
	out := make([]pgtype.UUID, len(vals))
	for i, v := range vals {
		out[i] = pgtype.UUID{Bytes: v, Valid: true}
	}
	return out
}

// micros converts a duration to whole microseconds, PostgreSQL's resolution.
func micros(d time.Duration) int64 { return d.Microseconds() }
