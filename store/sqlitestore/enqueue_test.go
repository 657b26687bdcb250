package sqlitestore_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/internal/sqlstore/sqlstoretest"
	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/store/sqlitestore"
)

// countRows counts the rows of the store's outbox table.
func countRows(t *testing.T, s *sqlitestore.Store) int { return sqlstoretest.CountRows(t, s) }

func TestEnqueue(t *testing.T) {
	big := reliar.NewMsg(orderPlaced{OrderID: strings.Repeat("x", 2000)})
	dup := newMsgs(1)[0]
	tests := []struct {
		name     string
		msgs     func() []reliar.Outgoing
		before   []reliar.Outgoing // committed first
		wantRows int               // rows in the table afterwards
		wantErr  error
	}{
		{name: "none", msgs: func() []reliar.Outgoing { return nil }},
		{name: "one", msgs: func() []reliar.Outgoing { return newMsgs(1) }, wantRows: 1},
		// More rows than one INSERT carries: several chunks in one call.
		{name: "several chunks", msgs: func() []reliar.Outgoing { return newMsgs(2500) }, wantRows: 2500},
		{name: "payload too large writes nothing",
			msgs:    func() []reliar.Outgoing { return append(newMsgs(3), big) },
			wantErr: outbox.ErrPayloadTooLarge},
		{name: "duplicate within the call",
			msgs:    func() []reliar.Outgoing { return []reliar.Outgoing{dup, dup} },
			wantErr: outbox.ErrDuplicateID},
		{name: "duplicate of a stored row",
			before:   []reliar.Outgoing{dup},
			msgs:     func() []reliar.Outgoing { return append(newMsgs(2), dup) },
			wantRows: 1, wantErr: outbox.ErrDuplicateID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			s := newStore(t, sqlitestore.WithMaxPayloadBytes(1024))
			if len(tt.before) > 0 {
				if err := enqueue(ctx, s, tt.before...); err != nil {
					t.Fatal(err)
				}
			}
			msgs := tt.msgs()
			err := enqueue(ctx, s, msgs...)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Enqueue: %v, want %v", err, tt.wantErr)
			}
			if tt.wantErr != nil && !reliar.IsPermanent(err) {
				t.Errorf("Enqueue error %v is not permanent", err)
			}
			if got := countRows(t, s); got != tt.wantRows {
				t.Errorf("%d rows stored, want %d", got, tt.wantRows)
			}
		})
	}
}

func TestEnqueueNamesTheDuplicateID(t *testing.T)   { target.EnqueueNamesTheDuplicateID(t) }
func TestEnqueueReturnsIDs(t *testing.T)            { target.EnqueueReturnsIDs(t) }
func TestEnqueueRollbackWritesNothing(t *testing.T) { target.EnqueueRollbackWritesNothing(t) }
func TestEnqueueRefusesBadInput(t *testing.T)       { target.EnqueueRefusesBadInput(t) }

// A program in another language enqueues with a plain INSERT of the three
// required columns; the store claims and decodes the row.
func TestPlainInsert(t *testing.T) { target.PlainInsert(t) }
