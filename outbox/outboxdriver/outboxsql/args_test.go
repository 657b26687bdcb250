package outboxsql

import (
	"database/sql"
	"errors"
	"testing"

	"github.com/google/uuid"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

func TestArgs(t *testing.T) {
	s, u, n := "s", uuid.MustParse("0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"), 3
	tests := []struct {
		name string
		got  any
		want any
	}{
		{"nil text", NullText(nil), nil},
		{"text", NullText(&s), "s"},
		{"nil uuid", NullUUID(nil), nil},
		{"uuid", NullUUID(&u), "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"},
		{"nil bytes", BytesText(nil), nil},
		{"empty bytes", BytesText([]byte{}), nil},
		{"bytes", BytesText([]byte(`{}`)), "{}"},
		{"nil int", IntOrNull(nil), nil},
		{"int", IntOrNull(&n), 3},
		{"json tuples", JSONArg([][3]any{{int64(1), "a", nil}}), `[[1,"a",null]]`},
		{"leases", LeaseArg([]outboxdriver.Lease{{ID: u, Token: u}}),
			`[["0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b","0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"]]`},
		{"no leases", LeaseArg(nil), `[]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Fatalf("got %#v, want %#v", tt.got, tt.want)
			}
		})
	}
}

// result is an sql.Result with a fixed answer.
type result struct {
	n   int64
	err error
}

func (r result) LastInsertId() (int64, error) { return 0, errors.New("unsupported") }
func (r result) RowsAffected() (int64, error) { return r.n, r.err }

func TestAffected(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name    string
		res     sql.Result
		err     error
		want    int64
		wantErr error
	}{
		{"rows", result{n: 3}, nil, 3, nil},
		{"statement failed", nil, boom, 0, boom},
		{"count failed", result{n: 3, err: boom}, nil, 0, boom},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := Affected(tt.res, tt.err)
			if n != tt.want || !errors.Is(err, tt.wantErr) {
				t.Fatalf("Affected = %d, %v; want %d, %v", n, err, tt.want, tt.wantErr)
			}
		})
	}
}
