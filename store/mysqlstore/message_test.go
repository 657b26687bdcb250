package mysqlstore_test

import "github.com/reliar/reliar/outbox/outboxdriver/outboxsql/outboxsqltest"

// orderPlaced is the tests' message body.
type orderPlaced = outboxsqltest.OrderPlaced

// newMsgs returns n fresh messages.
var newMsgs = outboxsqltest.NewMsgs
