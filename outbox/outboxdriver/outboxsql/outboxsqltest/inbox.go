package outboxsqltest

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/inbox"
	"github.com/reliar/reliar/inbox/inboxtest"
)

// Mark records (consumer, id) with m in a transaction of its own, commits
// it, and returns whether the record was new.
func Mark(t testing.TB, m inbox.Marker[*sql.Tx], db *sql.DB, consumer string, id reliar.MessageID) bool {
	t.Helper()
	tx, err := db.BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	first, err := m.MarkProcessed(t.Context(), tx, consumer, id)
	if err != nil {
		t.Fatalf("MarkProcessed: %v", err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	return first
}

// InboxHarness is the inboxtest harness of m, an inbox over db. The caller
// creates db's effects table, whose value column is the consumer's business
// effect; age is the statement that moves every processed_at back by its
// one parameter, in microseconds.
func InboxHarness(db *sql.DB, m inbox.Marker[*sql.Tx], age string) inboxtest.Harness[*sql.Tx] {
	return inboxtest.Harness[*sql.Tx]{
		Marker:   m,
		Begin:    func(ctx context.Context) (*sql.Tx, error) { return db.BeginTx(ctx, nil) },
		Commit:   func(tx *sql.Tx) error { return tx.Commit() },
		Rollback: func(tx *sql.Tx) error { return tx.Rollback() },
		Effect:   InsertEffect,
		Effects:  func(ctx context.Context) ([]string, error) { return EffectValues(ctx, db) },
		Advance: func(ctx context.Context, d time.Duration) error {
			_, err := db.ExecContext(ctx, age, d.Microseconds())
			return err
		},
	}
}

// InsertEffect writes the business effect v in tx.
func InsertEffect(ctx context.Context, tx *sql.Tx, v string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO effects (value) VALUES (?)`, v)
	return err
}

// EffectValues reads the value column of the effects table, the business
// table of the inbox tests.
func EffectValues(ctx context.Context, db *sql.DB) ([]string, error) {
	rows, err := db.QueryContext(ctx, `SELECT value FROM effects`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// InboxRefusesBadInput checks that the inbox refuses a nil transaction, a
// consumer name that is not valid, the nil message id and a retention that
// is not positive, each with a permanent error where it is the store's.
func (tg Target[T]) InboxRefusesBadInput(t *testing.T) {
	s := tg.New(t)
	in := tg.Inbox(s)
	tx, err := s.DB().BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	tests := []struct {
		name     string
		tx       *sql.Tx
		consumer string
		id       reliar.MessageID
		want     error
	}{
		{"nil transaction", nil, "billing", reliar.NewMessageID(), tg.ErrNilTx},
		{"empty consumer", tx, "", reliar.NewMessageID(), tg.ErrInvalidRequest},
		{"control byte in consumer", tx, "bill\ning", reliar.NewMessageID(), tg.ErrInvalidRequest},
		{"consumer too long", tx, strings.Repeat("c", 201), reliar.NewMessageID(), tg.ErrInvalidRequest},
		{"nil message id", tx, "billing", reliar.MessageID{}, tg.ErrInvalidRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			first, err := in.MarkProcessed(t.Context(), tt.tx, tt.consumer, tt.id)
			if first || !errors.Is(err, tt.want) {
				t.Fatalf("MarkProcessed = %v, %v; want %v", first, err, tt.want)
			}
		})
	}
	for _, retention := range []time.Duration{0, -time.Hour} {
		_, err := in.PurgeProcessed(t.Context(), retention, 10)
		if !errors.Is(err, tg.ErrInvalidRequest) || !reliar.IsPermanent(err) {
			t.Errorf("PurgeProcessed(retention %v) = %v, want a permanent ErrInvalidRequest", retention, err)
		}
	}
}

// InboxSchemaErrorsArePermanent checks that a missing processed_messages
// table is a permanent store *Error of both inbox operations.
func (tg Target[T]) InboxSchemaErrorsArePermanent(t *testing.T) {
	s := tg.New(t)
	if _, err := s.DB().ExecContext(t.Context(), `DROP TABLE processed_messages`); err != nil {
		t.Fatal(err)
	}
	in := tg.Inbox(s)
	tx, err := s.DB().BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	_, err = in.MarkProcessed(t.Context(), tx, "billing", reliar.NewMessageID())
	if op, ok := tg.ErrorOp(err); !ok || !reliar.IsPermanent(err) || op != "mark processed" {
		t.Fatalf("MarkProcessed = %v, want a permanent *Error", err)
	}
	// End the transaction first: a store write waits for the writers before
	// it, and this goroutine's own transaction is one of them.
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	_, err = in.PurgeProcessed(t.Context(), time.Hour, 10)
	if _, ok := tg.ErrorOp(err); !ok || !reliar.IsPermanent(err) {
		t.Fatalf("PurgeProcessed = %v, want a permanent *Error", err)
	}
}
