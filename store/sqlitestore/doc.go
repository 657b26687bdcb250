// Package sqlitestore is the SQLite outbox store, Reliar's embedded default.
//
// # Opening the database
//
// [Open] returns a *sql.DB on the modernc.org/sqlite driver set up the way the
// store needs: WAL journaling, a busy timeout, foreign keys, and
// _txlock=immediate so that every read-write transaction, the application's
// enqueue transaction included, starts with BEGIN IMMEDIATE. An application
// that opens its own handle gets the same with
//
//	db, err := sql.Open("sqlite", sqlitestore.DSN("app.db"))
//
// Deferred transactions (SQLite's default) still work, but a deferred
// transaction that reads before it writes can fail with SQLITE_BUSY when
// another connection commits in between, instead of waiting for the lock.
// The store's own transactions always begin with BEGIN IMMEDIATE, whatever
// the handle's settings.
//
// Several dispatchers in one process, and several processes on one file, are
// safe: SQLite lets one writer in at a time, and every claim runs in one
// immediate transaction, so each due row is claimed once. A database in
// memory (":memory:") is one database per connection and is not supported;
// use a file.
//
// # Commits and the disk
//
// Every commit at the handle's synchronous=FULL waits for an fsync of the
// log, holding SQLite's one write lock through it; on a dispatching process
// the claims and outcome writes take their turn among the producers'
// commits. [WithAsyncCommit] commits those dispatch writes at
// synchronous=NORMAL instead: a crash of the machine (not of the process)
// can then undo the last of them, which republishes a message and never
// loses one. `reliar demo` uses it.
//
// # Schema
//
// [Migrate] creates the outbox table and its indexes (migration 1) and the
// inbox's processed_messages table (migration 2), and records the applied
// version in the reliar_migrations table; [Migrations] exposes the same SQL
// for teams that run their own migration tool. [New] refuses a database whose
// schema is older than this release with a *[NotMigratedError].
//
// Times are stored as INTEGER microseconds since the Unix epoch (UTC), which
// sort and compare as numbers; ids, conversation, causation and request ids
// and lease tokens as canonical lower-case UUID text. SQLite has no server
// clock shared by its clients, so the store reads the time from a clock in Go
// (time.Now unless [WithClock] says otherwise) and writes it into every
// statement. A plain INSERT by another program gets created_at and
// available_at from SQLite's own clock, which on one machine is the same
// (to the millisecond). The STRICT table refuses a value of the wrong type
// and an id that is not canonical lower-case UUID text; a message_version
// outside 1-65535 is claimed as poison (dead, undecodable), never published
// as another version.
//
// # Per-key ordering
//
// SQLite lets one writer commit at a time, so sequence order is commit
// order. A per-key claim takes the head row of each key, its pending row of
// lowest sequence; a head that is leased or waiting for a retry blocks its
// key, while a head past expires_at without a live lease, which can never
// be published, does not (as on PostgreSQL): the key's next row goes on
// while the expiry sweep moves the head to dead.
//
// # Enqueue
//
// [Store.Enqueue] takes only a *sql.Tx, never a *sql.DB or a *sql.Conn: a
// message must commit or roll back together with the business change that
// caused it.
//
// # Wake-ups
//
// [Store.Wakeups] implements outboxdriver.Notifier without help from SQLite, which
// has no notifications: a watcher polls PRAGMA data_version (which moves
// when any other connection, in this process or another, commits) every few
// milliseconds on a connection of its own, outside the application's pool
// (one watcher per store, whatever the number of dispatchers subscribing),
// and signals when the outbox's
// largest sequence has grown. A dispatcher so claims a new message within
// about [DefaultWakeupInterval] of its commit instead of its next poll; the
// cost is a small constant load while idle (see DefaultWakeupInterval).
//
// # Inbox
//
// [Store.Inbox] returns an inbox.Marker[*sql.Tx]: a consumer records each
// message it processes in the processed_messages table, inside the same
// transaction as the message's business effect, and inbox.Process skips a
// message already recorded. The record is an INSERT … ON CONFLICT DO
// NOTHING; the rows it changed tell a first delivery (1) from a duplicate
// (0). Open the consumer's transactions with BEGIN IMMEDIATE (as [Open] and
// [DSN] do): concurrent deliveries of one message then take turns at
// SQLite's write lock, and each later one finds the first one's record, or
// records the message itself when the first rolled back. A deferred
// transaction that reads before it records may fail with SQLITE_BUSY instead
// of waiting (a transient error: roll back and let the message be
// redelivered).
//
// Records are kept for a retention period and then deleted by
// [Inbox.PurgeProcessed], in bounded batches, oldest first, never a record
// younger than the retention (inbox.DefaultRetention, 14 days, unless the
// caller says otherwise). The retention must exceed the broker's redelivery
// horizon, the longest time after which a message can still be delivered
// again (JetStream's MaxAge, Kafka's retention, a RabbitMQ queue's message
// TTL, a producer's own retries): a delivery that arrives after its record
// was purged is processed again. Records carry times from the store's clock.
package sqlitestore
