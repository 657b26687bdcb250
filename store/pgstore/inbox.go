package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/inbox"
)

// markProcessedSQL records (consumer, message id). A record that already
// exists, committed or made earlier in the same transaction, is left as it
// is and the statement inserts no row; an uncommitted record of another
// transaction makes it wait for that transaction to end.
const markProcessedSQL = `INSERT INTO {{schema}}.processed_messages (consumer, message_id)
VALUES ($1::text, $2::uuid)
ON CONFLICT (consumer, message_id) DO NOTHING`

// purgeProcessedSQL deletes at most $2 records older than $1 microseconds,
// the oldest first, chosen once in a materialized CTE; the outer statement
// repeats the CTE's predicate, so a record is never deleted younger than the
// retention.
const purgeProcessedSQL = `WITH batch AS MATERIALIZED (
    SELECT consumer, message_id FROM {{schema}}.processed_messages
    WHERE processed_at < now() - $1::int8 * interval '1 microsecond'
    ORDER BY processed_at LIMIT $2 FOR UPDATE SKIP LOCKED)
DELETE FROM {{schema}}.processed_messages p USING batch
WHERE p.consumer = batch.consumer AND p.message_id = batch.message_id
  AND p.processed_at < now() - $1::int8 * interval '1 microsecond'`

// Inbox records the messages a consumer processed in the processed_messages
// table, inside the consumer's own pgx transaction, so that at-least-once
// delivery becomes effectively-once processing (see package inbox). It
// implements inbox.Marker[pgx.Tx]; get one from [Store.Inbox], or use
// [InboxSQL] with database/sql. It is safe for concurrent use.
type Inbox struct {
	s *Store
}

var _ inbox.Marker[pgx.Tx] = (*Inbox)(nil)

// Inbox returns the store's inbox for pgx transactions. Its records carry
// the server's clock (the transaction's start time).
func (s *Store) Inbox() *Inbox { return &Inbox{s: s} }

// MarkProcessed records (consumer, id) in tx, the consumer's transaction,
// and reports whether the record is new. false means the consumer already
// processed the message, in a committed transaction or earlier in tx.
//
// A record of the same message that another transaction holds uncommitted
// makes the insert wait on the primary key until that transaction ends (or
// ctx ends, or the session's lock_timeout passes): after a commit it reports
// a duplicate, after a rollback it records the message itself, and in READ
// COMMITTED, PostgreSQL's default, neither case is an error. In REPEATABLE
// READ or SERIALIZABLE, a record committed after tx took its snapshot fails
// the insert with a serialization failure (SQLSTATE 40001), a transient
// error: roll back and retry the delivery, which then finds the record.
//
// Like any failed statement, a failed insert aborts tx; roll it back. The
// store's statement timeout does not apply: tx is the caller's.
func (i *Inbox) MarkProcessed(ctx context.Context, tx pgx.Tx, consumer string, id reliar.MessageID) (bool, error) {
	if tx == nil {
		return false, errors.New("pgstore: MarkProcessed needs a transaction, got nil")
	}
	if err := checkMark(consumer, id); err != nil {
		return false, err
	}
	tag, err := tx.Exec(ctx, i.s.sql.markProcessed, consumer, pgtype.UUID{Bytes: id, Valid: true})
	if err != nil {
		return false, wrapErr("mark processed", err)
	}
	return tag.RowsAffected() == 1, nil
}

// PurgeProcessed deletes at most limit records older than retention, the
// oldest first, in one statement on the store's pool, and returns how many
// it deleted; a limit that is not positive means 1000. A record younger
// than retention is never deleted, and a retention that is not positive is
// refused with a permanent error. Call it until it deletes fewer than limit
// to purge everything due. The retention must exceed the broker's
// redelivery horizon (see the package documentation).
func (i *Inbox) PurgeProcessed(ctx context.Context, retention time.Duration, limit int) (int64, error) {
	return i.s.purgeProcessed(ctx, retention, limit)
}

func (s *Store) purgeProcessed(ctx context.Context, retention time.Duration, limit int) (int64, error) {
	if retention <= 0 {
		return 0, reliar.Permanent(fmt.Errorf("pgstore: purge processed: retention must be positive, got %s", retention))
	}
	if limit <= 0 {
		limit = defaultPurgeBatch
	}
	return s.exec(ctx, adminTx, "purge processed", s.sql.purgeProcessed, micros(retention), limit)
}

// checkMark refuses what package inbox's Process refuses, for callers that
// use a Marker directly, and consumer names that a PostgreSQL text column
// cannot hold (invalid UTF-8), before anything is sent: a refused statement
// would abort the caller's transaction.
func checkMark(consumer string, id reliar.MessageID) error {
	err := inbox.ValidateConsumer(consumer)
	switch {
	case err != nil:
	case !utf8.ValidString(consumer):
		err = fmt.Errorf("consumer name %q is not valid UTF-8", consumer)
	case id == reliar.MessageID{}:
		err = errors.New("message id is the nil UUID")
	}
	if err != nil {
		return reliar.Permanent(fmt.Errorf("pgstore: mark processed: %w", err))
	}
	return nil
}
