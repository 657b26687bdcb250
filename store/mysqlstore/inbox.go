package mysqlstore

import (
	"context"
	"database/sql"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/inbox"
	"github.com/reliar/reliar/outbox/outboxdriver/outboxsql"
)

// markProcessed records (consumer, message id). A plain INSERT, so that a
// record that already exists fails with ER_DUP_ENTRY whatever the DSN's
// clientFoundRows says (an ON DUPLICATE KEY UPDATE reports one changed row
// for a duplicate when clientFoundRows=true), and no other error is turned
// into a warning as INSERT IGNORE would.
const markProcessed = `INSERT INTO processed_messages (consumer, message_id, processed_at)
	VALUES (?, ?, UTC_TIMESTAMP(6))`

// purgeProcessed deletes at most ? records older than ? microseconds, the
// oldest first: a single-table DELETE with ORDER BY and LIMIT, bounded, its
// WHERE checked on every row it locks.
const purgeProcessed = `DELETE FROM processed_messages
	WHERE processed_at < UTC_TIMESTAMP(6) - INTERVAL ? MICROSECOND
	ORDER BY processed_at LIMIT ?`

// Inbox records the messages a consumer processed in the processed_messages
// table, inside the consumer's own transaction, so that at-least-once
// delivery becomes effectively-once processing (see package inbox). It
// implements inbox.Marker[*sql.Tx]; get one from [Store.Inbox]. It is safe
// for concurrent use.
type Inbox struct {
	s *Store
}

var _ inbox.Marker[*sql.Tx] = (*Inbox)(nil)

// Inbox returns the store's inbox. Its records carry the server's clock.
func (s *Store) Inbox() *Inbox { return &Inbox{s: s} }

// MarkProcessed records (consumer, id) in tx, the consumer's transaction,
// and reports whether the record is new. false means the consumer already
// processed the message, in a committed transaction or earlier in tx; the
// duplicate-key error that says so undoes only the INSERT, so tx stays
// usable and the caller commits it.
//
// A record of the same message that another transaction holds uncommitted
// makes the INSERT wait (InnoDB locks the key) until that transaction ends,
// up to innodb_lock_wait_timeout: after a commit it finds the record, after
// a rollback it records the message itself. When the holder rolls back while
// two or more deliveries of the message wait, InnoDB lets one of them in and
// may pick another as a deadlock victim: the server then rolls back the
// victim's whole transaction, and MarkProcessed returns a transient *Error
// matching [ErrDeadlock]. The caller rolls back and retries the delivery
// (or lets the broker redeliver it); nothing was processed twice.
func (i *Inbox) MarkProcessed(ctx context.Context, tx *sql.Tx, consumer string, id reliar.MessageID) (bool, error) {
	if tx == nil {
		return false, ErrNilTx
	}
	if err := checkMark(consumer, id); err != nil {
		return false, err
	}
	_, err := tx.ExecContext(ctx, markProcessed, consumer, id.String())
	switch {
	case err == nil:
		return true, nil
	case serverNumber(err) == errDupEntry:
		return false, nil
	}
	return false, wrapErr("mark processed", err)
}

// PurgeProcessed deletes at most limit records older than retention, the
// oldest first, in one READ COMMITTED transaction (no gap locks, so it never
// blocks a consumer's record), and returns how many it deleted; a limit that
// is not positive means DefaultPurgeBatch. A record younger than retention is
// never deleted, and a retention that is not positive is refused with an
// error matching ErrInvalidRequest. Call it until it deletes fewer than limit
// to purge everything due. The retention must exceed the broker's redelivery
// horizon (see the package documentation).
func (i *Inbox) PurgeProcessed(ctx context.Context, retention time.Duration, limit int) (int64, error) {
	if retention <= 0 {
		return 0, invalidRequest("purge processed", "retention %v is not positive", retention)
	}
	if limit <= 0 {
		limit = DefaultPurgeBatch
	}
	var n int64
	err := i.s.inTx(ctx, "purge processed", func(tx *sql.Tx) error {
		var err error
		n, err = outboxsql.Affected(tx.ExecContext(ctx, purgeProcessed, micros(retention), limit))
		return err
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

// checkMark refuses what package inbox's Process refuses, for callers that
// use the Marker directly.
func checkMark(consumer string, id reliar.MessageID) error {
	if err := outboxsql.CheckMark(consumer, id); err != nil {
		return invalidRequest("mark processed", "%v", err)
	}
	return nil
}
