package sqlitestore_test

import (
	"testing"

	"github.com/reliar/reliar/outbox/outboxdriver/outboxsql/outboxsqltest"
)

// Four dispatchers share one SQLite file: each committed message is
// published exactly once, rolled-back ones never. (SQLite runs 20–35 times
// slower under the race detector, hence the smaller count.)
func TestDispatchersExactlyOnce(t *testing.T) {
	outboxsqltest.RunDispatchersExactlyOnce(t, target, 4, 2_000)
}
