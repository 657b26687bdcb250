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
// a store written against one v0.1.x release keeps compiling against a later
// one.
//
// # Same-version-only helpers
//
// [HandoffBook] (with [HandoffSub]) and [WakeHub] are not part of that
// promise, nor are the packages outboxsql and outboxsqltest: they are the
// bookkeeping Reliar's own stores share with the root module, public only
// because the stores are modules of their own. Like River's riverdriver, they
// are same-version-only: a store module works with the root module of its
// own version and no other, and a release may change these helpers in any way
// together with the stores. Reliar's release tool moves every module in
// lockstep (RELEASING.md); keep every Reliar module your go.mod lists at one
// version.
package outboxdriver
