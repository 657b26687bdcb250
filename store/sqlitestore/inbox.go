package sqlitestore

import (
	"context"
	"database/sql"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/inbox"
	"github.com/reliar/reliar/outbox/outboxdriver/outboxsql"
)

// markProcessed records (consumer, message id); a record that already
// exists is left as it is, and the statement then changes no row.
const markProcessed = `INSERT INTO processed_messages (consumer, message_id, processed_at)
	VALUES (?1, ?2, ?3)
	ON CONFLICT (consumer, message_id) DO NOTHING`

// purgeProcessed deletes at most ?2 records older than ?1, the oldest
// first; the outer statement repeats the subselect's predicate.
const purgeProcessed = `DELETE FROM processed_messages
	WHERE (consumer, message_id) IN (
	    SELECT consumer, message_id FROM processed_messages
	    WHERE processed_at < ?1
	    ORDER BY processed_at LIMIT ?2)
	  AND processed_at < ?1`

// Inbox records the messages a consumer processed in the processed_messages
// table, inside the consumer's own transaction, so that at-least-once
// delivery becomes effectively-once processing (see package inbox). It
// implements inbox.Marker[*sql.Tx]; get one from [Store.Inbox]. It is safe
// for concurrent use.
type Inbox struct {
	s *Store
}

var _ inbox.Marker[*sql.Tx] = (*Inbox)(nil)

// Inbox returns the store's inbox. Its records carry times from the store's
// clock ([WithClock]).
func (s *Store) Inbox() *Inbox { return &Inbox{s: s} }

// MarkProcessed records (consumer, id) in tx, the consumer's transaction,
// and reports whether the record is new. false means the consumer already
// processed the message, in a committed transaction or earlier in tx.
//
// Open tx with BEGIN IMMEDIATE (a handle from [Open] or [DSN] does it for
// every transaction): SQLite then admits one writer at a time, so a second
// delivery of the same message waits, up to the busy timeout, for the first
// delivery's transaction to end, and then finds its record or, after a
// rollback, records the message itself. In a deferred transaction that read
// before this call, the insert can fail with SQLITE_BUSY instead of waiting:
// a transient *Error, after which the caller rolls back and the delivery is
// retried.
func (i *Inbox) MarkProcessed(ctx context.Context, tx *sql.Tx, consumer string, id reliar.MessageID) (bool, error) {
	if tx == nil {
		return false, ErrNilTx
	}
	if err := checkMark(consumer, id); err != nil {
		return false, err
	}
	res, err := tx.ExecContext(ctx, markProcessed, consumer, id.String(), i.s.clock())
	if err != nil {
		return false, wrapErr("mark processed", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, wrapErr("mark processed", err)
	}
	return n == 1, nil
}

// PurgeProcessed deletes at most limit records older than retention, the
// oldest first, and returns how many it deleted; a limit that is not
// positive means DefaultPurgeBatch. A record younger than retention is never
// deleted, and a retention that is not positive is refused with an error
// matching ErrInvalidRequest. Call it until it deletes fewer than limit to
// purge everything due. The retention must exceed the broker's redelivery
// horizon (see the package documentation).
func (i *Inbox) PurgeProcessed(ctx context.Context, retention time.Duration, limit int) (int64, error) {
	if retention <= 0 {
		return 0, invalidRequest("purge processed", "retention %v is not positive", retention)
	}
	if limit <= 0 {
		limit = DefaultPurgeBatch
	}
	cutoff := toMicros(i.s.now().Add(-retention))
	return i.s.exec(ctx, "purge processed", purgeProcessed, cutoff, limit)
}

// checkMark refuses what package inbox's Process refuses, for callers that
// use the Marker directly.
func checkMark(consumer string, id reliar.MessageID) error {
	if err := outboxsql.CheckMark(consumer, id); err != nil {
		return invalidRequest("mark processed", "%v", err)
	}
	return nil
}
