// Package storetest is the conformance suite every outboxdriver.Store passes: each
// rule of the store contract is a subtest run against fresh stores made by a
// factory. A store implementation calls [Run] from its own tests.
//
// Two suites check what the rules, written from our own model of the rows,
// cannot: [Differential] drives a store and outbox/memstore, the model,
// through one seeded random sequence of operations and fails at the first
// observable difference; [RunHostile] writes rows with plain SQL the way a
// producer in another language would, every column at its edges
// ([HostileRows], [CommonEdges] and a dialect's own), runs a dispatcher over
// them and checks that every row ends published exactly once or dead with a
// reason.
package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/memstore"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// Harness is one fresh, empty store and the test hooks the suite needs to
// look inside it. Factories return a new Harness for every call, isolated
// from every other (a schema, database or file of its own).
type Harness struct {
	// Store is the store under test.
	Store outboxdriver.Store
	// Enqueue inserts msgs in one committed transaction through the store's
	// own enqueue path.
	Enqueue func(ctx context.Context, msgs ...reliar.Outgoing) error
	// InsertRow inserts a raw row as it is, bypassing encoding, so the suite
	// can plant poison (bad metadata JSON, an unknown metadata version,
	// headers that are not a string map). Nil AvailableAt means now.
	InsertRow func(ctx context.Context, row outboxdriver.Row) error
	// InsertUpperCase, optional, inserts a raw row as InsertRow does but
	// with plain SQL that writes its id in upper case, as some languages
	// print UUIDs. A store that refuses such an insert returns an error.
	// The differential test uses it, when set, to check that such a row is
	// either refused or completed like any other.
	InsertUpperCase func(ctx context.Context, row outboxdriver.Row) error
	// Inspect reads the bookkeeping columns of one row; it returns
	// ErrNoRow when the row does not exist.
	Inspect func(ctx context.Context, id reliar.MessageID) (RowState, error)
	// Advance makes the store behave as if d had passed: either every
	// stored timestamp moves d into the past (available_at, created_at,
	// last_claimed_at, locked_until, expires_at, published_at, dead_at), or
	// the store's own clock moves d forward. The suite measures time
	// against Stats().AsOf, so both work.
	Advance func(ctx context.Context, d time.Duration) error
}

// RowState is the bookkeeping of one stored row, field for field the one
// the model store reports ([memstore.RowState]), so that [Differential]
// compares a store's rows with the model's without converting them. Nil
// pointers are NULL columns.
type RowState = memstore.RowState

// Factory returns a fresh harness. It registers its own cleanup with t
// (t.Cleanup) and fails t when the store cannot be made.
type Factory func(t *testing.T) Harness

// ErrNoRow is returned by Harness.Inspect for a row that does not exist.
var ErrNoRow = errors.New("storetest: no such row")
