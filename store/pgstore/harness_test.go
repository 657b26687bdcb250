package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
	"github.com/reliar/reliar/outbox/storetest"
)

// newHarness is the storetest factory: a store on a fresh schema, with test
// hooks that reach into its table.
func newHarness(t *testing.T) storetest.Harness { return harnessWith()(t) }

// harnessWith is newHarness for stores built with opts.
func harnessWith(opts ...Option) func(t *testing.T) storetest.Harness {
	return func(t *testing.T) storetest.Harness { return harnessOf(newStore(t, opts...)) }
}

func harnessOf(s *Store) storetest.Harness {
	return storetest.Harness{
		Store: s,
		Enqueue: func(ctx context.Context, msgs ...reliar.Outgoing) error {
			return settled(ctx, func(tx pgx.Tx) error {
				_, err := s.Enqueue(ctx, tx, msgs...)
				return err
			})
		},
		InsertRow: func(ctx context.Context, row outboxdriver.Row) error {
			return settled(ctx, func(tx pgx.Tx) error { return insertRawRow(ctx, tx, s, row, row.ID.String()) })
		},
		InsertUpperCase: func(ctx context.Context, row outboxdriver.Row) error {
			return settled(ctx, func(tx pgx.Tx) error { return insertRawRow(ctx, tx, s, row, strings.ToUpper(row.ID.String())) })
		},
		Inspect: func(ctx context.Context, id reliar.MessageID) (storetest.RowState, error) {
			return inspectRow(ctx, s, id)
		},
		Advance: func(ctx context.Context, d time.Duration) error { return advance(ctx, s, d) },
	}
}

// insertRawRow writes row's columns as they are, its id as the text id. jsonb
// cannot hold text that is not JSON, so such metadata or headers are stored
// as a JSON string, which is just as undecodable.
func insertRawRow(ctx context.Context, tx pgx.Tx, s *Store, row outboxdriver.Row, id string) error {
	var createdAt pgtype.Timestamptz
	if !row.CreatedAt.IsZero() {
		createdAt = pgtype.Timestamptz{Time: row.CreatedAt, Valid: true}
	}
	version := int32(row.MessageVersion)
	if version == 0 {
		version = 1 // the column's default
	}
	var metaVersion pgtype.Int4
	if row.MetadataVersion != nil {
		metaVersion = pgtype.Int4{Int32: int32(*row.MetadataVersion), Valid: true}
	}
	_, err := tx.Exec(ctx, s.n.render(`INSERT INTO {{table}} (id, message_type, message_version,
    correlation_id, conversation_id, causation_id, request_id, content_type, payload,
    tenant_id, expires_at, ordering_key, metadata, headers, metadata_version,
    available_at, created_at, attempts)
VALUES ($1::text::uuid, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13::jsonb, $14::jsonb, $15,
    coalesce($16, now()), coalesce($17, now()), $18)`),
		id, row.MessageType, version,
		text(row.CorrelationID), uuidArg(row.ConversationID), uuidArg(row.CausationID), uuidArg(row.RequestID),
		nonEmptyOr(row.ContentType, "application/json"), nonNil(row.Payload),
		text(row.TenantID), timestamptz(row.ExpiresAt), text(row.OrderingKey),
		rawJSON(row.Metadata), rawJSON(row.Headers), metaVersion,
		timestamptz(row.AvailableAt), createdAt, int32(row.Attempts))
	return err
}

// settled runs write in a committed transaction and returns once that
// transaction is older than every transaction still running in the cluster.
// Per-key claims only take such rows (so that a transaction committing late
// is never overtaken); without the wait, any write transaction of a test
// running in parallel would make the suite's immediate per-key claims flaky.
func settled(ctx context.Context, write func(pgx.Tx) error) error {
	var xid string
	err := pgx.BeginFunc(ctx, sharedPool, func(tx pgx.Tx) error {
		if err := write(tx); err != nil {
			return err
		}
		return tx.QueryRow(ctx, "SELECT pg_current_xact_id()::text").Scan(&xid)
	})
	if err != nil {
		return err
	}
	return awaitSettled(ctx, xid)
}

// awaitSettled waits until xid is below the cluster's snapshot xmin.
func awaitSettled(ctx context.Context, xid string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		var done bool
		err := sharedPool.QueryRow(ctx, "SELECT $1::text::xid8 < pg_snapshot_xmin(pg_current_snapshot())", xid).Scan(&done)
		if err != nil || done {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("transaction %s never settled: %w", xid, ctx.Err())
		case <-time.After(2 * time.Millisecond):
		}
	}
}

func rawJSON(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	if json.Valid(b) {
		return b
	}
	quoted, _ := json.Marshal(string(b))
	return quoted
}

func nonEmptyOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

func inspectRow(ctx context.Context, s *Store, id reliar.MessageID) (storetest.RowState, error) {
	var st storetest.RowState
	err := sharedPool.QueryRow(ctx, s.n.render(`SELECT sequence, attempts, claim_count, lapsed_claims,
    locked_by, locked_until, lease_token, last_claimed_at, available_at, expires_at,
    published_at, dead_at, dead_reason, last_error
FROM {{table}} WHERE id = $1`), pgtype.UUID{Bytes: id, Valid: true}).Scan(
		&st.Sequence, &st.Attempts, &st.ClaimCount, &st.LapsedClaims,
		&st.LockedBy, &st.LockedUntil, &st.LeaseToken, &st.LastClaimedAt, &st.AvailableAt, &st.ExpiresAt,
		&st.PublishedAt, &st.DeadAt, &st.DeadReason, &st.LastError)
	if errors.Is(err, pgx.ErrNoRows) {
		return st, storetest.ErrNoRow
	}
	return st, err
}

// advance moves every stored timestamp d into the past.
func advance(ctx context.Context, s *Store, d time.Duration) error {
	_, err := sharedPool.Exec(ctx, s.n.render(`UPDATE {{table}} SET
    available_at = available_at - $1::int8 * interval '1 microsecond',
    created_at = created_at - $1::int8 * interval '1 microsecond',
    last_claimed_at = last_claimed_at - $1::int8 * interval '1 microsecond',
    locked_until = locked_until - $1::int8 * interval '1 microsecond',
    expires_at = expires_at - $1::int8 * interval '1 microsecond',
    published_at = published_at - $1::int8 * interval '1 microsecond',
    dead_at = dead_at - $1::int8 * interval '1 microsecond',
    updated_at = updated_at - $1::int8 * interval '1 microsecond'`), micros(d))
	return err
}

func TestStoreConformance(t *testing.T) {
	t.Parallel()
	storetest.Run(t, newHarness)
}

// The differential test: random operations on the store and on memstore,
// compared step by step (storetest.Differential).
func TestDifferential(t *testing.T) {
	t.Parallel()
	storetest.Differential(t, newHarness, storetest.DifferentialOptions{Steps: 2500})
}
