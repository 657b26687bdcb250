package pgstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// Enqueue writes msgs into the outbox inside tx, the caller's transaction, in
// one round trip whatever their number and types, and returns their ids in
// order. The messages become visible to dispatchers when tx commits, and not
// at all if it rolls back; Enqueue also notifies waiting dispatchers at
// commit. It takes only a transaction, never a pool or a connection, which
// would commit the messages apart from the business change.
//
// A reused id fails with a *outboxdriver.DuplicateIDError (errors.Is
// outboxdriver.ErrDuplicateID) and aborts tx, like any failed statement. A payload
// over the store's limit fails with a *outboxdriver.PayloadTooLargeError before
// anything is sent. The store's statement timeout does not apply here.
func (s *Store) Enqueue(ctx context.Context, tx pgx.Tx, msgs ...reliar.Outgoing) ([]reliar.MessageID, error) {
	if tx == nil {
		return nil, errors.New("pgstore: Enqueue needs a transaction, got nil")
	}
	if ids, ok, err := s.enqueueLeased(ctx, tx, msgs); ok {
		return ids, err
	}
	args, ids, _, err := s.enqueueArgs(ctx, msgs, false)
	if err != nil || len(ids) == 0 {
		return nil, err
	}
	args[0] = s.notifyChannel()
	if _, err := tx.Exec(ctx, s.sql.enqueue, args...); err != nil {
		return nil, enqueueErr(err)
	}
	return ids, nil
}

// EnqueueSQL is Enqueue for a database/sql transaction, which must come from
// pgx's driver (github.com/jackc/pgx/v5/stdlib); another driver fails with
// ErrNotPgxDriver before anything is sent. See the package documentation for
// getting the transaction out of GORM or ent.
func (s *Store) EnqueueSQL(ctx context.Context, tx *sql.Tx, msgs ...reliar.Outgoing) ([]reliar.MessageID, error) {
	if tx == nil {
		return nil, errors.New("pgstore: EnqueueSQL needs a transaction, got nil")
	}
	args, ids, _, err := s.enqueueArgs(ctx, msgs, false)
	if err != nil || len(ids) == 0 {
		return nil, err
	}
	// The channel goes first: database/sql converts arguments in order, so
	// another driver refuses it before looking at the arrays.
	args[0] = pgxOnlyText(s.notifyChannel())
	if _, err := tx.ExecContext(ctx, s.sql.enqueue, args...); err != nil {
		if errors.Is(err, ErrNotPgxDriver) {
			return nil, ErrNotPgxDriver
		}
		return nil, enqueueErr(err)
	}
	return ids, nil
}

func (s *Store) notifyChannel() string {
	if s.cfg.noNotify {
		return ""
	}
	return s.n.channel
}

// pgxOnlyText is a statement argument that only pgx can send. pgx's
// database/sql driver hands arguments to pgx untouched, which encodes a
// pgtype.TextValuer; every other driver converts arguments through
// driver.Valuer, which refuses. It is how EnqueueSQL tells the driver apart
// without a round trip.
type pgxOnlyText string

// TextValue implements pgtype.TextValuer.
func (t pgxOnlyText) TextValue() (pgtype.Text, error) {
	return pgtype.Text{String: string(t), Valid: true}, nil
}

// Value implements driver.Valuer and always fails.
func (t pgxOnlyText) Value() (driver.Value, error) { return nil, ErrNotPgxDriver }

// enqueueArgs encodes msgs into the enqueue statement's parallel arrays,
// leaving the first argument, the channel, to the caller, and with keep
// the encoded rows too. It fails before anything is written when one
// message cannot be encoded.
func (s *Store) enqueueArgs(ctx context.Context, msgs []reliar.Outgoing, keep bool) ([]any, []reliar.MessageID, []outboxdriver.Row, error) {
	n := len(msgs)
	var rows []outboxdriver.Row
	if keep {
		rows = make([]outboxdriver.Row, n)
	}
	var (
		ids          = make([]reliar.MessageID, n)
		idArg        = make([]pgtype.UUID, n)
		types        = make([]string, n)
		versions     = make([]int32, n)
		correlations = make([]pgtype.Text, n)
		convs        = make([]pgtype.UUID, n)
		causations   = make([]pgtype.UUID, n)
		requests     = make([]pgtype.UUID, n)
		contentTypes = make([]string, n)
		payloads     = make([][]byte, n)
		tenants      = make([]pgtype.Text, n)
		expires      = make([]pgtype.Timestamptz, n)
		keys         = make([]pgtype.Text, n)
		metadata     = make([][]byte, n)
		headers      = make([][]byte, n)
		metaVersions = make([]pgtype.Int4, n)
		available    = make([]pgtype.Timestamptz, n)
	)
	for i, m := range msgs {
		r, err := outboxdriver.NewRow(ctx, m, s.cfg.serializer, s.cfg.maxPayloadBytes)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("pgstore: enqueue message %d of %d: %w", i+1, n, err)
		}
		if keep {
			rows[i] = r
		}
		ids[i] = r.ID
		idArg[i] = pgtype.UUID{Bytes: r.ID, Valid: true}
		types[i] = r.MessageType
		versions[i] = int32(r.MessageVersion)
		correlations[i] = text(r.CorrelationID)
		convs[i] = uuidArg(r.ConversationID)
		causations[i] = uuidArg(r.CausationID)
		requests[i] = uuidArg(r.RequestID)
		contentTypes[i] = r.ContentType
		payloads[i] = r.Payload
		if payloads[i] == nil {
			payloads[i] = []byte{}
		}
		tenants[i] = text(r.TenantID)
		expires[i] = timestamptz(r.ExpiresAt)
		keys[i] = text(r.OrderingKey)
		metadata[i] = r.Metadata
		headers[i] = r.Headers
		if r.MetadataVersion != nil {
			metaVersions[i] = pgtype.Int4{Int32: int32(*r.MetadataVersion), Valid: true}
		}
		available[i] = timestamptz(r.AvailableAt)
	}
	args := []any{nil, idArg, types, versions,
		compactArray(correlations, textValue), compactArray(convs, uuidValue),
		compactArray(causations, uuidValue), compactArray(requests, uuidValue),
		contentTypes, payloads, compactArray(tenants, textValue), compactArray(expires, timeValue),
		compactArray(keys, textValue), compactArray(metadata, docValue), compactArray(headers, docValue),
		compactArray(metaVersions, int4Value), compactArray(available, timeValue)}
	return args, ids, rows, nil
}

// enqueueErr maps a failed insert: a primary key violation becomes a
// *outboxdriver.DuplicateIDError naming the id when the server reports it.
func enqueueErr(err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" && pgErr.ConstraintName == "outbox_pkey" {
		dup := &outboxdriver.DuplicateIDError{Err: fmt.Errorf("pgstore: enqueue: %w", err)}
		if _, rest, ok := strings.Cut(pgErr.Detail, "=("); ok {
			if id, _, ok := strings.Cut(rest, ")"); ok {
				dup.ID, _ = reliar.ParseMessageID(id)
			}
		}
		return dup
	}
	return wrapErr("enqueue", err)
}

// SQLEnqueuer is a store's EnqueueSQL under the name Enqueue, so that code
// on database/sql can depend on outbox.Enqueuer[*sql.Tx] (the Store itself
// is an outbox.Enqueuer[pgx.Tx]). Get one from Store.SQL.
type SQLEnqueuer struct{ s *Store }

// SQL returns the store as an enqueuer of *sql.Tx transactions.
func (s *Store) SQL() SQLEnqueuer { return SQLEnqueuer{s: s} }

// Enqueue calls the store's EnqueueSQL.
func (e SQLEnqueuer) Enqueue(ctx context.Context, tx *sql.Tx, msgs ...reliar.Outgoing) ([]reliar.MessageID, error) {
	return e.s.EnqueueSQL(ctx, tx, msgs...)
}
