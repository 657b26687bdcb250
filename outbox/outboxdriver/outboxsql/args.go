package outboxsql

import (
	"database/sql"
	"encoding/json"

	"github.com/google/uuid"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// NullText encodes an optional string: NULL when nil.
func NullText(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

// NullUUID encodes an optional UUID as canonical text: NULL when nil.
func NullUUID(u *uuid.UUID) any {
	if u == nil {
		return nil
	}
	return u.String()
}

// BytesText encodes a JSON document as text: NULL when empty.
func BytesText(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return string(b)
}

// IntOrNull encodes an optional integer: NULL when nil.
func IntOrNull(v *int) any {
	if v == nil {
		return nil
	}
	return *v
}

// JSONArg encodes v, a slice of tuples of strings, numbers and nils, as the
// JSON text of an argument that the statement turns into rows (SQLite's
// json_each, MariaDB's JSON_TABLE). Such values always encode.
func JSONArg(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// LeaseArg encodes leases as a JSON array of [id, token] pairs.
func LeaseArg(leases []outboxdriver.Lease) string {
	elems := make([][2]string, len(leases))
	for i, l := range leases {
		elems[i] = [2]string{l.ID.String(), l.Token.String()}
	}
	return JSONArg(elems)
}

// Affected returns the rows a statement affected, for wrapping the result of
// an ExecContext call.
func Affected(res sql.Result, err error) (int64, error) {
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, err
	}
	return n, nil
}
