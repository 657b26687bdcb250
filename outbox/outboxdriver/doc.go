// Package outboxdriver is the contract between the dispatcher and a store:
// what a store author implements ([Store], and optionally [Notifier] and
// [MaintenanceLocker]), the values that cross it (claims, leases, outcomes,
// purge requests, statistics, dead-letter pages) and the row codec every
// store shares ([NewRow] to encode a message for insertion,
// [Row.Envelope] to decode a claimed row, [SanitizeError] for last_error).
//
// Users of Reliar do not need this package: they construct a store from
// pgstore, sqlitestore, mysqlstore or memstore and hand it to
// outbox.New, which re-exports the few names of the contract a user
// touches (Store, Stats, the dead-letter types, Ordering). Store authors run
// the conformance suite in package outbox/storetest against their store;
// stores built on database/sql can share the code in package outboxsql.
//
// The contract is kept compatible within a release line, like the user API:
// a store module of one version works with the root module of a later one.
package outboxdriver
