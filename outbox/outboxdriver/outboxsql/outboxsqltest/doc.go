// Package outboxsqltest holds the test support and the tests that the
// database/sql outbox stores (sqlitestore and mysqlstore) share: the
// storetest harness over a *sql.DB, the tests of poison rows, of schema
// errors, of enqueue and of the inbox's input checks, and the benchmarks.
// A store describes itself in a [Target] and calls them from its own tests.
//
// Like package outboxsql, it is same-version-only: a store module's tests
// run against the root module of its own version and no other, and any
// release may change this package together with the stores.
package outboxsqltest
