package mysqlstore_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/google/uuid"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/outbox/storetest"
	"github.com/reliar/reliar/store/mysqlstore"
)

// dsnEnv overrides the server the tests use; the default is the local
// MariaDB as root without a password.
const dsnEnv = "RELIAR_TEST_MYSQL_DSN"

// baseConfig is the driver configuration of the test server, without a
// database.
func baseConfig(t testing.TB) *mysql.Config {
	t.Helper()
	if dsn := os.Getenv(dsnEnv); dsn != "" {
		cfg, err := mysql.ParseDSN(dsn)
		if err != nil {
			t.Fatalf("%s: %v", dsnEnv, err)
		}
		cfg.DBName = ""
		cfg.ParseTime = true
		return cfg
	}
	cfg := mysql.NewConfig()
	cfg.User = "root"
	cfg.Net = "tcp"
	cfg.Addr = "127.0.0.1:3306"
	cfg.ParseTime = true
	return cfg
}

// newDatabase creates a database of the test's own, dropped when the test
// ends, and returns the configuration that opens it.
func newDatabase(t testing.TB) *mysql.Config {
	t.Helper()
	cfg := baseConfig(t)
	admin, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 6)
	rand.Read(b)
	name := "reliar_test_" + hex.EncodeToString(b)
	if _, err := admin.ExecContext(t.Context(), "CREATE DATABASE "+name); err != nil {
		admin.Close()
		t.Fatalf("create database (is MariaDB running on %s?): %v", cfg.Addr, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := admin.ExecContext(ctx, "DROP DATABASE "+name); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
		admin.Close()
	})
	cfg.DBName = name
	return cfg
}

// openDB opens cfg and closes the handle when the test ends.
func openDB(t testing.TB, cfg *mysql.Config) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// newDB returns a handle on a fresh migrated database.
func newDB(t testing.TB) (*sql.DB, *mysql.Config) {
	t.Helper()
	cfg := newDatabase(t)
	db := openDB(t, cfg)
	if err := mysqlstore.Migrate(t.Context(), db); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	return db, cfg
}

// newStore returns a store over a fresh migrated database.
func newStore(t testing.TB, opts ...mysqlstore.Option) *mysqlstore.Store {
	t.Helper()
	db, _ := newDB(t)
	s, err := mysqlstore.New(t.Context(), db, opts...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}

// enqueue writes msgs through s in one committed transaction.
func enqueue(ctx context.Context, s *mysqlstore.Store, msgs ...reliar.Outgoing) error {
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

// TestConformance runs the store contract's suite, each subtest on a fresh
// database of its own: with the driver's default DSN settings, and with
// clientFoundRows=true, under which an UPDATE reports the rows it matched
// rather than those it changed (every count the contract checks must agree).
func TestConformance(t *testing.T) {
	for _, tt := range []struct {
		name            string
		clientFoundRows bool
	}{
		{"default", false},
		{"clientFoundRows", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T) storetest.Harness { return harness(t, tt.clientFoundRows) })
		})
	}
}

// harness is the storetest harness of a fresh store.
func harness(t *testing.T, clientFoundRows bool) storetest.Harness {
	_, cfg := newDB(t)
	cfg = cfg.Clone()
	cfg.ClientFoundRows = clientFoundRows
	db := openDB(t, cfg)
	s, err := mysqlstore.New(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	return storetest.Harness{
		Store: s,
		Enqueue: func(ctx context.Context, msgs ...reliar.Outgoing) error {
			return enqueue(ctx, s, msgs...)
		},
		InsertRow: func(ctx context.Context, r outbox.Row) error { return insertRow(ctx, db, r) },
		Inspect: func(ctx context.Context, id reliar.MessageID) (storetest.RowState, error) {
			return inspect(ctx, db, id)
		},
		Advance: func(ctx context.Context, d time.Duration) error { return advance(ctx, db, d) },
	}
}

// insertRow writes r as it is, bypassing the store's encoding.
func insertRow(ctx context.Context, db *sql.DB, r outbox.Row) error {
	var created any
	if !r.CreatedAt.IsZero() {
		created = r.CreatedAt.UTC()
	}
	payload := r.Payload
	if payload == nil {
		payload = []byte{}
	}
	_, err := db.ExecContext(ctx, `INSERT INTO outbox (id, message_type, message_version,
		correlation_id, conversation_id, causation_id, request_id, content_type, payload,
		tenant_id, expires_at, ordering_key, metadata, headers, metadata_version,
		created_at, available_at, attempts)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,
		COALESCE(?, UTC_TIMESTAMP(6)), COALESCE(?, UTC_TIMESTAMP(6)), ?)`,
		r.ID.String(), r.MessageType, max(r.MessageVersion, 1), r.CorrelationID, uuidText(r.ConversationID),
		uuidText(r.CausationID), uuidText(r.RequestID), contentType(r.ContentType), payload,
		r.TenantID, utc(r.ExpiresAt), r.OrderingKey, text(r.Metadata), text(r.Headers), r.MetadataVersion,
		created, utc(r.AvailableAt), r.Attempts)
	return err
}

// inspect reads the bookkeeping columns of one row.
func inspect(ctx context.Context, db *sql.DB, id reliar.MessageID) (storetest.RowState, error) {
	var st storetest.RowState
	var lockedUntil, lastClaimed, expires, published, dead sql.NullTime
	var token sql.NullString
	err := db.QueryRowContext(ctx, `SELECT sequence, attempts, claim_count, lapsed_claims,
		locked_by, locked_until, lease_token, last_claimed_at, available_at, expires_at,
		published_at, dead_at, dead_reason, last_error
		FROM outbox WHERE id = ?`, id.String()).Scan(
		&st.Sequence, &st.Attempts, &st.ClaimCount, &st.LapsedClaims,
		&st.LockedBy, &lockedUntil, &token, &lastClaimed, &st.AvailableAt, &expires,
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
	st.AvailableAt = st.AvailableAt.UTC()
	st.LockedUntil = timePtr(lockedUntil)
	st.LastClaimedAt = timePtr(lastClaimed)
	st.ExpiresAt = timePtr(expires)
	st.PublishedAt = timePtr(published)
	st.DeadAt = timePtr(dead)
	return st, nil
}

// advance moves every stored time d into the past.
func advance(ctx context.Context, db *sql.DB, d time.Duration) error {
	_, err := db.ExecContext(ctx, `UPDATE outbox SET
		available_at = available_at - INTERVAL ? MICROSECOND,
		created_at = created_at - INTERVAL ? MICROSECOND,
		updated_at = updated_at - INTERVAL ? MICROSECOND,
		last_claimed_at = last_claimed_at - INTERVAL ? MICROSECOND,
		locked_until = locked_until - INTERVAL ? MICROSECOND,
		expires_at = expires_at - INTERVAL ? MICROSECOND,
		published_at = published_at - INTERVAL ? MICROSECOND,
		dead_at = dead_at - INTERVAL ? MICROSECOND`,
		repeat(d.Microseconds(), 8)...)
	return err
}

func repeat(v any, n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func timePtr(v sql.NullTime) *time.Time {
	if !v.Valid {
		return nil
	}
	t := v.Time.UTC()
	return &t
}

func utc(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UTC()
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
