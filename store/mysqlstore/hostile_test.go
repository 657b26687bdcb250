package mysqlstore_test

import (
	"testing"

	"github.com/reliar/reliar/outbox/storetest"
)

// mariadbEdges are MariaDB's own edges: zero dates, which its default
// sql_mode accepts, and times at the ends of DATETIME.
var mariadbEdges = []storetest.Edge{
	storetest.SQLEdge("available_at zero date", storetest.ExpectEither, "available_at", "'0000-00-00 00:00:00'"),
	storetest.SQLEdge("created_at zero date", storetest.ExpectEither, "created_at", "'0000-00-00 00:00:00'"),
	storetest.SQLEdge("expires_at zero date", storetest.ExpectEither, "expires_at", "'0000-00-00 00:00:00'"),
	storetest.SQLEdge("created_at at the end of DATETIME", storetest.ExpectPublished, "created_at", "'9999-12-31 23:59:59.999999'"),
	storetest.SQLEdge("expires_at at the end of DATETIME", storetest.ExpectPublished, "expires_at", "'9999-12-31 23:59:59.999999'"),
	storetest.SQLEdge("message_version as text", storetest.ExpectEither, "message_version", "'2x'"),
}

// Rows written with plain SQL at every column's edge, mixed with good rows:
// each good row is published exactly once, every row ends published or dead
// with a reason.
func TestHostileRows(t *testing.T) { target.HostileRows(t, 120, mariadbEdges...) }

func FuzzHostileRows(f *testing.F) { target.FuzzHostileRows(f, mariadbEdges...) }
