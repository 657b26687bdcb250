package sqlitestore_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/store/sqlitestore"
)

// newDB opens a migrated database in a fresh file of the test's own
// temporary directory, closed when the test ends.
func newDB(t testing.TB) (*sql.DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "outbox.db")
	db := openDB(t, path)
	if err := sqlitestore.Migrate(t.Context(), db); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	return db, path
}

// openDB opens path with sqlitestore.Open and closes it when the test ends.
func openDB(t testing.TB, path string) *sql.DB {
	t.Helper()
	db, err := sqlitestore.Open(path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// newStore returns a store over a fresh migrated database.
func newStore(t testing.TB, opts ...sqlitestore.Option) *sqlitestore.Store {
	t.Helper()
	db, _ := newDB(t)
	s, err := sqlitestore.New(t.Context(), db, opts...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}

// enqueue writes msgs through s in one committed transaction.
func enqueue(ctx context.Context, s *sqlitestore.Store, msgs ...reliar.Outgoing) error {
	tx, err := s.DB().BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if _, err := s.Enqueue(ctx, tx, msgs...); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// rowState mirrors storetest.RowState: the bookkeeping of one stored row.
type rowState struct {
	Sequence      int64
	Attempts      int
	ClaimCount    int
	LapsedClaims  int
	LockedBy      *string
	LockedUntil   *time.Time
	LeaseToken    *uuid.UUID
	LastClaimedAt *time.Time
	AvailableAt   time.Time
	ExpiresAt     *time.Time
	PublishedAt   *time.Time
	DeadAt        *time.Time
	DeadReason    *string
	LastError     *string
}

// errNoRow is inspect's error for a row that does not exist.
var errNoRow = errors.New("no such row")

// insertRow writes r as it is, bypassing the store's encoding.
func insertRow(ctx context.Context, db *sql.DB, r outbox.Row) error {
	now := time.Now().UnixMicro()
	available := now
	if r.AvailableAt != nil {
		available = r.AvailableAt.UnixMicro()
	}
	created := now
	if !r.CreatedAt.IsZero() {
		created = r.CreatedAt.UnixMicro()
	}
	payload := r.Payload
	if payload == nil {
		payload = []byte{}
	}
	_, err := db.ExecContext(ctx, `INSERT INTO outbox (id, message_type, message_version,
		correlation_id, conversation_id, causation_id, request_id, content_type, payload,
		tenant_id, expires_at, ordering_key, metadata, headers, metadata_version,
		created_at, available_at, attempts)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
		r.ID.String(), r.MessageType, max(r.MessageVersion, 1), r.CorrelationID, uuidText(r.ConversationID),
		uuidText(r.CausationID), uuidText(r.RequestID), contentType(r.ContentType), payload,
		r.TenantID, micros(r.ExpiresAt), r.OrderingKey, text(r.Metadata), text(r.Headers), r.MetadataVersion,
		created, available, r.Attempts)
	return err
}

// inspect reads the bookkeeping columns of one row.
func inspect(ctx context.Context, db *sql.DB, id reliar.MessageID) (rowState, error) {
	var st rowState
	var lockedUntil, lastClaimed, expires, published, dead sql.NullInt64
	var available int64
	var token sql.NullString
	err := db.QueryRowContext(ctx, `SELECT sequence, attempts, claim_count, lapsed_claims,
		locked_by, locked_until, lease_token, last_claimed_at, available_at, expires_at,
		published_at, dead_at, dead_reason, last_error
		FROM outbox WHERE id = ?`, id.String()).Scan(
		&st.Sequence, &st.Attempts, &st.ClaimCount, &st.LapsedClaims,
		&st.LockedBy, &lockedUntil, &token, &lastClaimed, &available, &expires,
		&published, &dead, &st.DeadReason, &st.LastError)
	if errors.Is(err, sql.ErrNoRows) {
		return st, errNoRow
	}
	if err != nil {
		return st, err
	}
	if token.Valid {
		u, err := uuid.Parse(token.String)
		if err != nil {
			return st, err
		}
		st.LeaseToken = &u
	}
	st.AvailableAt = time.UnixMicro(available).UTC()
	st.LockedUntil = timePtr(lockedUntil)
	st.LastClaimedAt = timePtr(lastClaimed)
	st.ExpiresAt = timePtr(expires)
	st.PublishedAt = timePtr(published)
	st.DeadAt = timePtr(dead)
	return st, nil
}

// advance moves every stored time d into the past.
func advance(ctx context.Context, db *sql.DB, d time.Duration) error {
	us := d.Microseconds()
	_, err := db.ExecContext(ctx, `UPDATE outbox SET
		available_at = available_at - ?1,
		created_at = created_at - ?1,
		updated_at = updated_at - ?1,
		last_claimed_at = last_claimed_at - ?1,
		locked_until = locked_until - ?1,
		expires_at = expires_at - ?1,
		published_at = published_at - ?1,
		dead_at = dead_at - ?1`, us)
	return err
}

func timePtr(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := time.UnixMicro(v.Int64).UTC()
	return &t
}

func micros(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UnixMicro()
}

func uuidText(u *uuid.UUID) any {
	if u == nil {
		return nil
	}
	return u.String()
}

func text(b []byte) any {
	if b == nil {
		return nil
	}
	return string(b)
}

func contentType(s string) string {
	if s == "" {
		return "application/json"
	}
	return s
}
