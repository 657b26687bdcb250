package pgstore

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/reliar/reliar"
)

// Message types used across the tests.
type (
	orderPlaced struct {
		OrderID string `json:"order_id"`
	}
	paymentTaken struct {
		OrderID string `json:"order_id"`
		Cents   int64  `json:"cents"`
	}
	blob struct {
		Data []byte `json:"data"`
	}
)

func (orderPlaced) MessageType() string     { return "orders.placed" }
func (paymentTaken) MessageType() string    { return "payments.taken" }
func (paymentTaken) MessageVersion() uint16 { return 3 }
func (blob) MessageType() string            { return "blobs.stored" }

// enqueue writes msgs in one committed transaction on the shared pool.
func enqueue(t testing.TB, s *Store, msgs ...reliar.Outgoing) []reliar.MessageID {
	t.Helper()
	var ids []reliar.MessageID
	err := pgx.BeginFunc(t.Context(), sharedPool, func(tx pgx.Tx) error {
		var err error
		ids, err = s.Enqueue(t.Context(), tx, msgs...)
		return err
	})
	if err != nil {
		t.Fatalf("enqueue: %v", err)
	}
	return ids
}

// countRows counts the rows of the store's table matching a predicate.
func countRows(t testing.TB, s *Store, where string) int {
	t.Helper()
	var n int
	if err := sharedPool.QueryRow(context.WithoutCancel(t.Context()), s.n.render(`SELECT count(*) FROM {{table}} WHERE `+where)).Scan(&n); err != nil {
		t.Fatalf("count rows: %v", err)
	}
	return n
}
