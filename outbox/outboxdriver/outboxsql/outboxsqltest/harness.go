package outboxsqltest

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
	"github.com/reliar/reliar/outbox/storetest"
)

// Harness is the storetest harness of s.
func (tg Target[T]) Harness(s Store) storetest.Harness {
	db := s.DB()
	return storetest.Harness{
		Store: s,
		Enqueue: func(ctx context.Context, msgs ...reliar.Outgoing) error {
			return Enqueue(ctx, s, msgs...)
		},
		InsertRow: func(ctx context.Context, r outboxdriver.Row) error { return tg.InsertRow(ctx, db, r) },
		InsertUpperCase: func(ctx context.Context, r outboxdriver.Row) error {
			return tg.insertRow(ctx, db, r, strings.ToUpper(r.ID.String()))
		},
		Inspect: func(ctx context.Context, id reliar.MessageID) (storetest.RowState, error) {
			return tg.Inspect(ctx, db, id)
		},
		Advance: func(ctx context.Context, d time.Duration) error { return tg.Advance(ctx, db, d) },
	}
}

// InsertRow writes r as it is, bypassing the store's encoding; the zero
// CreatedAt and a nil AvailableAt mean now.
func (tg Target[T]) InsertRow(ctx context.Context, db *sql.DB, r outboxdriver.Row) error {
	return tg.insertRow(ctx, db, r, r.ID.String())
}

// insertRow is InsertRow with the id written as id.
func (tg Target[T]) insertRow(ctx context.Context, db *sql.DB, r outboxdriver.Row, id string) error {
	var created any
	if !r.CreatedAt.IsZero() {
		created = tg.Times.Encode(r.CreatedAt)
	}
	payload := r.Payload
	if payload == nil {
		payload = []byte{}
	}
	contentType := r.ContentType
	if contentType == "" {
		contentType = "application/json"
	}
	_, err := db.ExecContext(ctx, `INSERT INTO outbox (id, message_type, message_version,
		correlation_id, conversation_id, causation_id, request_id, content_type, payload,
		tenant_id, expires_at, ordering_key, metadata, headers, metadata_version,
		created_at, available_at, attempts)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,
		COALESCE(?, `+tg.Now+`), COALESCE(?, `+tg.Now+`), ?)`,
		id, r.MessageType, max(r.MessageVersion, 1), r.CorrelationID, uuidText(r.ConversationID),
		uuidText(r.CausationID), uuidText(r.RequestID), contentType, payload,
		r.TenantID, tg.Times.NullArg(r.ExpiresAt), r.OrderingKey, text(r.Metadata), text(r.Headers), r.MetadataVersion,
		created, tg.Times.NullArg(r.AvailableAt), r.Attempts)
	return err
}

// Inspect reads the bookkeeping columns of one row; storetest.ErrNoRow when
// it does not exist.
func (tg Target[T]) Inspect(ctx context.Context, db *sql.DB, id reliar.MessageID) (storetest.RowState, error) {
	var st storetest.RowState
	var lockedUntil, lastClaimed, expires, published, dead sql.Null[T]
	var available T
	var token sql.NullString
	err := db.QueryRowContext(ctx, `SELECT sequence, attempts, claim_count, lapsed_claims,
		locked_by, locked_until, lease_token, last_claimed_at, available_at, expires_at,
		published_at, dead_at, dead_reason, last_error
		FROM outbox WHERE id = ?`, id.String()).Scan(
		&st.Sequence, &st.Attempts, &st.ClaimCount, &st.LapsedClaims,
		&st.LockedBy, &lockedUntil, &token, &lastClaimed, &available, &expires,
		&published, &dead, &st.DeadReason, &st.LastError)
	if errors.Is(err, sql.ErrNoRows) {
		return st, storetest.ErrNoRow
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
	st.AvailableAt = tg.Times.Decode(available)
	st.LockedUntil = tg.Times.Null(lockedUntil)
	st.LastClaimedAt = tg.Times.Null(lastClaimed)
	st.ExpiresAt = tg.Times.Null(expires)
	st.PublishedAt = tg.Times.Null(published)
	st.DeadAt = tg.Times.Null(dead)
	return st, nil
}

// uuidText is an optional UUID as text, NULL when nil.
func uuidText(u *uuid.UUID) any {
	if u == nil {
		return nil
	}
	return u.String()
}

// text is a document as it is: NULL only when nil, so that an empty one
// reaches the table.
func text(b []byte) any {
	if b == nil {
		return nil
	}
	return string(b)
}
