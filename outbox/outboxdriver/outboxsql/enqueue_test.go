package outboxsql

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// sized returns n rows of size payload bytes each.
func sized(n, size int) []outboxdriver.Row {
	rows := make([]outboxdriver.Row, n)
	for i := range rows {
		rows[i] = outboxdriver.Row{ID: reliar.NewMessageID(), Payload: make([]byte, size)}
	}
	return rows
}

func TestInsertChunkLen(t *testing.T) {
	tests := []struct {
		name string
		in   Insert
		rows []outboxdriver.Row
		want int
	}{
		{"all fit", Insert{Arity: 2, MaxParams: 10}, sized(5, 1), 5},
		{"parameter limit", Insert{Arity: 3, MaxParams: 10}, sized(5, 1), 3},
		{"byte limit", Insert{Arity: 1, MaxParams: 100, MaxBytes: 25}, sized(5, 10), 2},
		{"no byte limit", Insert{Arity: 1, MaxParams: 100}, sized(5, 1<<20), 5},
		{"one row over the byte limit still goes", Insert{Arity: 1, MaxParams: 100, MaxBytes: 5}, sized(3, 10), 1},
		{"one row over the parameter limit still goes", Insert{Arity: 20, MaxParams: 10}, sized(3, 1), 1},
		{"none", Insert{Arity: 1, MaxParams: 10}, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.in.ChunkLen(tt.rows); got != tt.want {
				t.Fatalf("ChunkLen = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestInsertArgs(t *testing.T) {
	at := time.Date(2030, 1, 2, 3, 4, 5, 6000, time.UTC)
	key, version := "k", 1
	r := outboxdriver.Row{ID: reliar.NewMessageID(), MessageType: "t", MessageVersion: 2, ContentType: "application/json",
		ExpiresAt: &at, OrderingKey: &key, Metadata: []byte(`{}`), MetadataVersion: &version}
	args := InsertArgs([]any{"before"}, &r, testMicros)
	if len(args) != 1+InsertArity || len(args)-1 != strings.Count(InsertColumns, ",")+1 {
		t.Fatalf("%d arguments for %d columns", len(args)-1, InsertArity)
	}
	want := []any{"before", r.ID.String(), "t", 2, nil, nil, nil, nil, "application/json", []byte{}, nil,
		at.UnixMicro(), "k", "{}", nil, 1}
	for i := range want {
		if b, ok := want[i].([]byte); ok {
			if got, ok := args[i].([]byte); !ok || string(got) != string(b) {
				t.Errorf("argument %d = %#v, want %#v", i, args[i], want[i])
			}
			continue
		}
		if args[i] != want[i] {
			t.Errorf("argument %d = %#v, want %#v", i, args[i], want[i])
		}
	}
}

func TestInsertExec(t *testing.T) {
	boom := errors.New("boom")
	in := Insert{Statement: "INSERT INTO t (a) VALUES ", Group: "(?)", Arity: 1, MaxParams: 2}
	rowArg := func(args []any, r *outboxdriver.Row) []any { return append(args, r.ID.String()) }
	tests := []struct {
		name       string
		rows       int
		failAt     int // the statement that fails, from 1; 0 for none
		statements int
		failedRows int
	}{
		{name: "none", rows: 0, statements: 0},
		{name: "one statement", rows: 2, statements: 1},
		{name: "three statements", rows: 5, statements: 3},
		{name: "second statement fails", rows: 5, failAt: 2, statements: 2, failedRows: 2},
		{name: "last statement fails", rows: 5, failAt: 3, statements: 3, failedRows: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := 0
			f := &fakeDB{execErr: func(string) error {
				n++
				if n == tt.failAt {
					return boom
				}
				return nil
			}}
			tx, err := f.open(t).BeginTx(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
			rows := sized(tt.rows, 1)
			failed, err := in.Exec(t.Context(), tx, rows, rowArg)
			calls := f.calls()
			if len(calls) != tt.statements {
				t.Fatalf("%d statements, want %d", len(calls), tt.statements)
			}
			if tt.failAt == 0 {
				if err != nil || failed != nil {
					t.Fatalf("Exec = %v, %v", failed, err)
				}
			} else if !errors.Is(err, boom) || len(failed) != tt.failedRows ||
				failed[0].ID != rows[2*(tt.failAt-1)].ID {
				t.Fatalf("Exec = %d failed rows, %v; want the %d rows of statement %d", len(failed), err, tt.failedRows, tt.failAt)
			}
			next := 0
			for _, c := range calls {
				if !strings.HasPrefix(c.query, in.Statement) || strings.Count(c.query, "(?)") != len(c.args) {
					t.Fatalf("statement %q with %d arguments", c.query, len(c.args))
				}
				for _, a := range c.args {
					if a != rows[next].ID.String() {
						t.Fatalf("argument %v, want row %d's id", a, next)
					}
					next++
				}
			}
		})
	}
}

func TestDuplicate(t *testing.T) {
	cause := errors.New("unique constraint")
	id := reliar.NewMessageID()
	tests := []struct {
		name   string
		answer []driverValue // the lookup's row; nil for none
		want   reliar.MessageID
	}{
		{"found", []driverValue{id.String()}, id},
		{"not found", nil, reliar.MessageID{}},
		{"not a UUID", []driverValue{"x"}, reliar.MessageID{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeDB{answer: func(query string, args []any) ([]string, [][]driverValue, error) {
				if query != "LOOKUP" || len(args) != 1 || args[0] != "arg" {
					t.Errorf("lookup %q %v", query, args)
				}
				if tt.answer == nil {
					return []string{"id"}, nil, nil
				}
				return []string{"id"}, [][]driverValue{tt.answer}, nil
			}}
			tx, err := f.open(t).BeginTx(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
			err = Duplicate(t.Context(), tx, "LOOKUP", []any{"arg"}, cause)
			var de *outboxdriver.DuplicateIDError
			if !errors.As(err, &de) || de.ID != tt.want || !errors.Is(err, cause) || !errors.Is(err, outboxdriver.ErrDuplicateID) {
				t.Fatalf("Duplicate = %#v, want one naming %v caused by %v", err, tt.want, cause)
			}
		})
	}
}
