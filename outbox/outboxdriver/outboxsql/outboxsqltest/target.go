package outboxsqltest

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/inbox"
	"github.com/reliar/reliar/outbox/outboxdriver"
	"github.com/reliar/reliar/outbox/outboxdriver/outboxsql"
)

// Store is a database/sql outbox store as the shared tests see it.
type Store interface {
	outboxdriver.Store
	// DB returns the handle the store works on.
	DB() *sql.DB
	// Enqueue writes msgs inside tx.
	Enqueue(ctx context.Context, tx *sql.Tx, msgs ...reliar.Outgoing) ([]reliar.MessageID, error)
}

// Target describes a store under test, whose times are stored as T.
type Target[T any] struct {
	// New returns a store over a fresh migrated database of t's own.
	New func(t testing.TB) Store
	// Inbox returns the store's inbox.
	Inbox func(s Store) inbox.Marker[*sql.Tx]
	// Times is how the store keeps times.
	Times outboxsql.TimeCodec[T]
	// Now is the SQL expression of the current time as stored.
	Now string
	// Advance moves every stored time of the outbox d into the past.
	Advance func(ctx context.Context, db *sql.DB, d time.Duration) error
	// ErrorOp returns the Op of the store's *Error in err's chain, and
	// whether there is one.
	ErrorOp func(err error) (op string, ok bool)
	// Open is the store's New over an existing handle.
	Open func(ctx context.Context, db *sql.DB) (Store, error)
	// SchemaVersion is the store's SchemaVersion.
	SchemaVersion int
	// Migrate is the store's Migrate.
	Migrate func(ctx context.Context, db *sql.DB) error
	// NotMigrated returns Have and Want of the store's *NotMigratedError
	// in err's chain, and whether there is one.
	NotMigrated func(err error) (have, want int, ok bool)
	// ErrNilTx is the store's error for a nil transaction.
	ErrNilTx error
	// ErrInvalidRequest is matched by the store's refused requests.
	ErrInvalidRequest error
}

// Enqueue writes msgs through s in one committed transaction.
func Enqueue(ctx context.Context, s Store, msgs ...reliar.Outgoing) error {
	tx, err := s.DB().BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if _, err := s.Enqueue(ctx, tx, msgs...); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// CountRows counts the rows of the store's outbox table.
func CountRows(t testing.TB, s Store) int {
	t.Helper()
	var n int
	if err := s.DB().QueryRowContext(t.Context(), `SELECT COUNT(*) FROM outbox`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// OrderPlaced is the tests' message body.
type OrderPlaced struct {
	OrderID string `json:"order_id"`
	N       int    `json:"n"`
}

// MessageType names the body's type.
func (OrderPlaced) MessageType() string { return "test.order_placed" }

// NewMsgs returns n fresh messages.
func NewMsgs(n int) []reliar.Outgoing {
	out := make([]reliar.Outgoing, n)
	for i := range out {
		out[i] = reliar.NewMsg(OrderPlaced{OrderID: "o", N: i})
	}
	return out
}

// AcquireRequest claims up to n rows for a minute, a row going dead at its
// second lapsed claim.
func AcquireRequest(n int) outboxdriver.AcquireRequest {
	return outboxdriver.AcquireRequest{Worker: "w", BatchSize: n, Lease: time.Minute, MaxClaims: 2}
}
