// Package sqlstore holds what the database/sql outbox stores (sqlitestore
// and mysqlstore) share: the raw row and its decoding, the multi-row INSERT
// of Enqueue, the dead-letter page, the migration files, the options every
// store takes and the JSON arguments of the lease-fenced writes.
//
// Each store keeps its SQL and its error type. What differs between the
// dialects is passed in: how a time is stored (a [TimeCodec]), the INSERT's
// values group and limits (an [Insert]), and the store's name and invalid
// option error (in [Settings]).
package sqlstore
