package sqlitestore_test

import (
	"strings"
	"testing"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
	"github.com/reliar/reliar/outbox/outboxdriver/outboxsql/outboxsqltest"
	"github.com/reliar/reliar/store/sqlitestore"
)

func TestEnqueue(t *testing.T) {
	big := reliar.NewMsg(orderPlaced{OrderID: strings.Repeat("x", 2000)})
	dup := newMsgs(1)[0]
	limited := func(t testing.TB) outboxsqltest.Store { return newStore(t, sqlitestore.WithMaxPayloadBytes(1024)) }
	outboxsqltest.EnqueueCases(t, limited, []outboxsqltest.EnqueueCase{
		{Name: "none", Msgs: func() []reliar.Outgoing { return nil }},
		{Name: "one", Msgs: func() []reliar.Outgoing { return newMsgs(1) }, WantRows: 1},
		// More rows than one INSERT carries: several chunks in one call.
		{Name: "several chunks", Msgs: func() []reliar.Outgoing { return newMsgs(2500) }, WantRows: 2500},
		{Name: "payload too large writes nothing",
			Msgs:    func() []reliar.Outgoing { return append(newMsgs(3), big) },
			WantErr: outboxdriver.ErrPayloadTooLarge},
		{Name: "duplicate within the call",
			Msgs:    func() []reliar.Outgoing { return []reliar.Outgoing{dup, dup} },
			WantErr: outboxdriver.ErrDuplicateID},
		{Name: "duplicate of a stored row",
			Before:   []reliar.Outgoing{dup},
			Msgs:     func() []reliar.Outgoing { return append(newMsgs(2), dup) },
			WantRows: 1, WantErr: outboxdriver.ErrDuplicateID},
	})
}

func TestEnqueueNamesTheDuplicateID(t *testing.T)   { target.EnqueueNamesTheDuplicateID(t) }
func TestEnqueueReturnsIDs(t *testing.T)            { target.EnqueueReturnsIDs(t) }
func TestEnqueueRollbackWritesNothing(t *testing.T) { target.EnqueueRollbackWritesNothing(t) }
func TestEnqueueRefusesBadInput(t *testing.T)       { target.EnqueueRefusesBadInput(t) }

// A program in another language enqueues with a plain INSERT of the three
// required columns; the store claims and decodes the row.
func TestPlainInsert(t *testing.T) { target.PlainInsert(t) }
