package mysqlstore_test

import (
	"testing"

	"github.com/reliar/reliar/outbox/outboxdriver/outboxsql/outboxsqltest"
)

// Four dispatchers share 10,000 messages on one MariaDB table: each
// committed message is published exactly once, rolled-back ones never.
func TestDispatchersExactlyOnce(t *testing.T) {
	outboxsqltest.RunDispatchersExactlyOnce(t, target, 4, 10_000)
}
