// Package mysqlstoretest asserts, in a user's tests, what a MariaDB
// transaction (a *sql.Tx) enqueued into mysqlstore's outbox:
// RequireEnqueuedTx, RequireNotEnqueuedTx and RequireManyEnqueuedTx. They
// read the outbox table inside the transaction, so they see its uncommitted
// messages (and the committed ones it can see) and nothing of a
// transaction that rolled back, then check them with the matchers of
// package outboxtest (by message type, ordering key, tenant, payload
// predicate). Their names follow River's rivertest.
package mysqlstoretest
