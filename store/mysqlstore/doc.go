// Package mysqlstore is the MariaDB outbox store (MariaDB 10.6 or later; the
// SQL also runs on MySQL 8, where the dialects agree, but only MariaDB is
// tested).
//
// # Opening the database
//
// The store works on a *sql.DB of github.com/go-sql-driver/mysql that the
// application owns. Its DSN must set parseTime=true and keep the default
// loc=UTC; [New] checks both. For example:
//
//	app:secret@tcp(db:3306)/app?parseTime=true
//
// # Schema
//
// [Migrate] creates the outbox table (migration 1) and the inbox's
// processed_messages table (migration 2), adds the trigger that stores ids
// in canonical form (migration 3), and records the applied version in the
// reliar_migrations table; it is idempotent and serialised across processes
// by GET_LOCK. [Migrations] exposes the same SQL for teams that run their own
// migration tool (golang-migrate's driver needs multiStatements=true). [New]
// refuses an older schema with a *[NotMigratedError].
//
// Producers in other languages insert with plain SQL. Outcome writes find a
// row by its id as Go prints a UUID, lower case with hyphens, on a column
// that compares bytes: a BEFORE INSERT trigger stores an id written in upper
// case, or without hyphens, in that form, and a row whose id is in any other
// form is claimed as poison (dead, undecodable) rather than handed out. A
// CHECK constraint would have refused such ids instead, but MariaDB adds one
// only by copying the table, blocking its writers. Creating the trigger with
// binary logging on needs the SUPER privilege or
// log_bin_trust_function_creators = 1. A message_version outside 1-65535 is
// poison too, never published as another version.
//
// Times are DATETIME(6) in UTC and come from the server's clock
// (UTC_TIMESTAMP(6)), never the application's. MariaDB has no partial
// indexes, so generated columns that are NULL once a row is published or dead
// stand in for them: the claim, the stats and the expiry sweep read pending
// rows only.
//
// # Claims and locks
//
// A claim is one READ COMMITTED transaction: SELECT … FOR UPDATE SKIP LOCKED
// picks the due rows (concurrent claimers skip each other's rows instead of
// waiting), then an UPDATE leases them with a fresh token each (MariaDB has
// no UPDATE … RETURNING). READ COMMITTED takes no gap locks, so claims and
// purges never block the application's inserts. Outcome writes are single
// statements fenced by id and lease token.
//
// Per-key ordering is not offered: without an equivalent of PostgreSQL's
// transaction snapshot, a row whose transaction commits late could be
// overtaken by a later row of its key. The store implements
// outboxdriver.MaintenanceLocker with GET_LOCK.
//
// # Enqueue
//
// [Store.Enqueue] takes only a *sql.Tx: a message must commit or roll back
// together with the business change that caused it.
//
// # Inbox
//
// [Store.Inbox] returns an inbox.Marker[*sql.Tx]: a consumer records each
// message it processes in the processed_messages table, inside the same
// transaction as the message's business effect, and inbox.Process skips a
// message already recorded. The record is a plain INSERT: a duplicate-key
// error (which undoes only that statement; the transaction goes on) says the
// message was processed. A delivery whose record another transaction holds
// uncommitted waits for it (InnoDB locks the key): after a commit it sees a
// duplicate, after a rollback it records the message itself.
//
// One case surfaces as an error: when the transaction holding a record
// rolls back while two or more other deliveries of the same message wait
// for it, InnoDB lets one of them record the message and rolls back the
// others' whole transactions as deadlock victims. MarkProcessed cannot retry
// in a transaction the server has ended; it returns a transient *[Error]
// matching [ErrDeadlock], and the caller rolls back and retries the delivery
// (or lets the broker redeliver it), which then finds the winner's record.
// No message is processed twice, and none is lost. With
// innodb_deadlock_detect off, the victims instead wait for
// innodb_lock_wait_timeout and fail with a transient error the same way.
//
// Records are kept for a retention period and then deleted by
// [Inbox.PurgeProcessed], in bounded batches, oldest first, never a record
// younger than the retention (inbox.DefaultRetention, 14 days, unless the
// caller says otherwise). The retention must exceed the broker's redelivery
// horizon, the longest time after which a message can still be delivered
// again (JetStream's MaxAge, Kafka's retention, a RabbitMQ queue's message
// TTL, a producer's own retries): a delivery that arrives after its record
// was purged is processed again. Records carry the server's clock.
//
// # Affected-row counts
//
// The driver's clientFoundRows setting changes what an UPDATE reports: the
// rows it changed (the default) or the rows it matched (true). The store
// works with either. Every outcome write changes each row it matches (a
// lease token is replaced or cleared, attempts grow), and the inbox reads a
// duplicate-key error, not a count. The one exception is an ExtendLease
// repeated for the same lease with the same duration within one
// microsecond, which under the default reports 0 for a lease still held; the
// dispatcher renews a lease every Lease/2, so it never does that, and a short
// count would only be counted as a renewal shortfall. The conformance suites
// run under both settings.
package mysqlstore
