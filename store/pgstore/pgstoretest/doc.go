// Package pgstoretest asserts, in a user's tests, what a PostgreSQL
// transaction enqueued into pgstore's outbox: RequireEnqueuedTx,
// RequireNotEnqueuedTx and RequireManyEnqueuedTx for a pgx.Tx, and their
// SQLTx forms for a *sql.Tx of pgx's database/sql driver (EnqueueSQL). They
// read the outbox table inside the transaction, so they see its uncommitted
// messages (and the committed ones it can see) and nothing of a
// transaction that rolled back, then check them with the matchers of
// package outboxtest (by message type, ordering key, tenant, payload
// predicate). Their names follow River's rivertest.
package pgstoretest
