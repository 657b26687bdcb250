package mysqlstore_test

import (
	"strings"
	"testing"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
	"github.com/reliar/reliar/outbox/outboxdriver/outboxsql/outboxsqltest"
	"github.com/reliar/reliar/store/mysqlstore"
)

func TestEnqueue(t *testing.T) {
	big := reliar.NewMsg(orderPlaced{OrderID: strings.Repeat("x", 2000)})
	dup := newMsgs(1)[0]
	limited := func(n int) func(t testing.TB) outboxsqltest.Store {
		return func(t testing.TB) outboxsqltest.Store { return newStore(t, mysqlstore.WithMaxPayloadBytes(n)) }
	}
	outboxsqltest.EnqueueCases(t, target.New, []outboxsqltest.EnqueueCase{
		{Name: "none", Msgs: func() []reliar.Outgoing { return nil }},
		{Name: "one", Msgs: func() []reliar.Outgoing { return newMsgs(1) }, WantRows: 1},
		// More rows than one INSERT carries: several chunks in one call.
		{Name: "several chunks by parameters", Msgs: func() []reliar.Outgoing { return newMsgs(5000) }, WantRows: 5000},
		{Name: "several chunks by bytes", WantRows: 5, New: limited(2 << 20),
			Msgs: func() []reliar.Outgoing {
				out := make([]reliar.Outgoing, 5)
				for i := range out {
					out[i] = reliar.NewMsg(orderPlaced{OrderID: strings.Repeat("y", 1500<<10)})
				}
				return out
			}},
		{Name: "payload too large writes nothing", New: limited(1024),
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
