package sqlitestore_test

import (
	"testing"

	"github.com/reliar/reliar/outbox/storetest"
)

// sqliteEdges are SQLite's own edges: its dynamic typing (text or a real
// where an integer belongs, refused by the STRICT table) and times far
// outside the usual range.
var sqliteEdges = []storetest.Edge{
	storetest.SQLEdge("available_at as text", storetest.ExpectEither, "available_at", "'soon'"),
	storetest.SQLEdge("attempts as a real", storetest.ExpectEither, "attempts", "1.5"),
	storetest.SQLEdge("message_version as text", storetest.ExpectEither, "message_version", "'2'"),
	storetest.SQLEdge("created_at at the bottom of INTEGER", storetest.ExpectEither, "created_at", "-9223372036854775808"),
	storetest.SQLEdge("expires_at at the top of INTEGER", storetest.ExpectEither, "expires_at", "9223372036854775807"),
	storetest.SQLEdge("payload as text", storetest.ExpectEither, "payload", "'{}'"),
}

// Rows written with plain SQL at every column's edge, mixed with good rows:
// each good row is published exactly once, every row ends published or dead
// with a reason.
func TestHostileRows(t *testing.T) { target.HostileRows(t, 120, sqliteEdges...) }

func FuzzHostileRows(f *testing.F) { target.FuzzHostileRows(f, sqliteEdges...) }
