package mysqlstore_test

import "github.com/reliar/reliar/internal/sqlstore/sqlstoretest"

// orderPlaced is the tests' message body.
type orderPlaced = sqlstoretest.OrderPlaced

// newMsgs returns n fresh messages.
var newMsgs = sqlstoretest.NewMsgs
