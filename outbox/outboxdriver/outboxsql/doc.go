// Package outboxsql holds what outbox stores built on database/sql
// (sqlitestore and mysqlstore) share: the raw row and its decoding, the multi-row INSERT
// of Enqueue, the dead-letter page, the migration files, the options every
// store takes, the JSON arguments of the lease-fenced writes, and the
// whole-table reads of the stores' test kits (ReadAll, DecodeAll).
//
// Each store keeps its SQL and its error type. What differs between the
// dialects is passed in: how a time is stored (a [TimeCodec]), the INSERT's
// values group and limits (an [Insert]), and the store's name and invalid
// option error (in [Settings]).
//
// It is public only because the stores are modules of their own, and it is
// same-version-only: a store module works with the root module of its own
// version and no other, and any release may change this package together
// with the stores that use it (see the outboxdriver package documentation).
// Users of Reliar never need it.
package outboxsql
