package pgstore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/inbox"
)

// InboxSQL is [Inbox] for consumers on database/sql: it implements
// inbox.Marker[*sql.Tx] for transactions of pgx's database/sql driver
// (github.com/jackc/pgx/v5/stdlib), over the same processed_messages table.
// Get one from [Store.InboxSQL]. It is safe for concurrent use.
type InboxSQL struct {
	s *Store
}

var _ inbox.Marker[*sql.Tx] = (*InboxSQL)(nil)

// InboxSQL returns the store's inbox for database/sql transactions of pgx's
// driver.
func (s *Store) InboxSQL() *InboxSQL { return &InboxSQL{s: s} }

// MarkProcessed is [Inbox.MarkProcessed] for a *sql.Tx, which must come from
// pgx's driver: another driver fails with ErrNotPgxDriver before anything is
// sent. It waits for, and reports, concurrent records of the same message
// the same way.
func (i *InboxSQL) MarkProcessed(ctx context.Context, tx *sql.Tx, consumer string, id reliar.MessageID) (bool, error) {
	if tx == nil {
		return false, errors.New("pgstore: MarkProcessed needs a transaction, got nil")
	}
	if err := checkMark(consumer, id); err != nil {
		return false, err
	}
	// The consumer goes first as an argument only pgx can send, as in
	// EnqueueSQL.
	res, err := tx.ExecContext(ctx, i.s.sql.markProcessed, pgxOnlyText(consumer), pgtype.UUID{Bytes: id, Valid: true})
	if err != nil {
		if errors.Is(err, ErrNotPgxDriver) {
			return false, ErrNotPgxDriver
		}
		return false, wrapErr("mark processed", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, wrapErr("mark processed", err)
	}
	return n == 1, nil
}

// PurgeProcessed is [Inbox.PurgeProcessed]: it runs on the store's pool.
func (i *InboxSQL) PurgeProcessed(ctx context.Context, retention time.Duration, limit int) (int64, error) {
	return i.s.purgeProcessed(ctx, retention, limit)
}
