// Package memstore is an in-memory outbox store: an outboxdriver.Store,
// outboxdriver.DeadLetters, outboxdriver.Notifier,
// outboxdriver.MaintenanceLocker and outboxdriver.TenantStatser that keeps
// its rows in memory. It passes the conformance suite of package storetest
// in full, per-key ordering and tenant fairness included, so it stands in
// for a database in unit tests of code that enqueues or dispatches
// messages.
//
// It is not durable and has no transactions: Enqueue writes at once, all or
// nothing per call. Claims cost O(log n) per row: due rows are kept in an
// index ordered by (available_at, sequence) and lapsed leases are found
// through an index on locked_until. A claim under Fairness FairnessTenant
// scans the pending rows instead, O(n) per claim. Times are kept to the
// microsecond, as the SQL stores keep them, so that rows tie and are
// ordered by sequence where theirs do: storetest.Differential uses memstore
// as the model of every store.
package memstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// Store is an in-memory outbox store, safe for concurrent use. The zero value
// is not usable; call New.
type Store struct {
	maxPayload int
	serializer reliar.Serializer
	clock      func() time.Time

	mu      sync.Mutex
	offset  time.Duration // added to clock by Advance
	nextSeq int64
	rows    map[reliar.MessageID]*row
	pending map[reliar.MessageID]*row

	ready     *rowHeap
	heads     *rowHeap
	leased    *rowHeap
	published *rowHeap
	dead      *rowHeap
	expiring  *rowHeap            // ready rows that have an expires_at
	keys      map[string]*rowHeap // pending rows per ordering key, by sequence
	headOf    map[string]*row     // the row of each key in the heads index
	frozen    map[string]bool     // keys whose head a running claim killed

	subscribers map[chan struct{}]struct{}
	maintenance bool
}

// ErrInvalidOption is matched (with errors.Is) by the error New returns for
// an invalid option.
var ErrInvalidOption = errors.New("memstore: invalid option")

// Option configures a Store. Every option validates its argument: a refused
// one wraps ErrInvalidOption.
type Option func(*options) error

// options is what the options set.
type options struct {
	maxPayload int
	serializer reliar.Serializer
	clock      func() time.Time
}

// WithMaxPayloadBytes sets the largest payload Enqueue accepts. Defaults to
// outboxdriver.DefaultMaxPayloadBytes (1 MiB).
func WithMaxPayloadBytes(n int) Option {
	return func(o *options) error {
		if n <= 0 {
			return fmt.Errorf("%w: WithMaxPayloadBytes: %d is not positive", ErrInvalidOption, n)
		}
		o.maxPayload = n
		return nil
	}
}

// WithSerializer sets the serializer Enqueue encodes bodies with. Defaults to
// reliar.JSON.
func WithSerializer(ser reliar.Serializer) Option {
	return func(o *options) error {
		if ser == nil {
			return fmt.Errorf("%w: WithSerializer: nil serializer", ErrInvalidOption)
		}
		o.serializer = ser
		return nil
	}
}

// WithClock sets the store's clock, the source of every time it writes and
// compares. Defaults to time.Now (which testing/synctest fakes inside a
// bubble).
func WithClock(now func() time.Time) Option {
	return func(o *options) error {
		if now == nil {
			return fmt.Errorf("%w: WithClock: nil clock", ErrInvalidOption)
		}
		o.clock = now
		return nil
	}
}

// New returns an empty store, or an error matching ErrInvalidOption.
func New(opts ...Option) (*Store, error) {
	o := options{maxPayload: outboxdriver.DefaultMaxPayloadBytes, serializer: reliar.JSON, clock: time.Now}
	var errs []error
	for _, opt := range opts {
		if opt != nil {
			errs = append(errs, opt(&o))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &Store{
		maxPayload:  o.maxPayload,
		serializer:  o.serializer,
		clock:       o.clock,
		nextSeq:     1,
		rows:        make(map[reliar.MessageID]*row),
		pending:     make(map[reliar.MessageID]*row),
		ready:       newRowHeap(idxReady, byAvailable),
		heads:       newRowHeap(idxHeads, byAvailable),
		leased:      newRowHeap(idxLeased, byLockedUntil),
		published:   newRowHeap(idxPublished, byPublishedAt),
		dead:        newRowHeap(idxDead, byDeadAt),
		expiring:    newRowHeap(idxExpiring, byExpiresAt),
		keys:        make(map[string]*rowHeap),
		headOf:      make(map[string]*row),
		subscribers: make(map[chan struct{}]struct{}),
	}, nil
}

var (
	_ outboxdriver.Store             = (*Store)(nil)
	_ outboxdriver.Notifier          = (*Store)(nil)
	_ outboxdriver.MaintenanceLocker = (*Store)(nil)
	_ outboxdriver.TenantStatser     = (*Store)(nil)
)

// Capabilities reports per-key ordering, wake-ups, the maintenance lock and
// tenant fairness.
func (s *Store) Capabilities() outboxdriver.Capabilities {
	return outboxdriver.Capabilities{PerKeyOrdering: true, Notify: true, MaintenanceLock: true, TenantFairness: true}
}

// now is the store's clock, to the microsecond (as the SQL stores keep
// times); s.mu must be held.
func (s *Store) now() time.Time { return s.clock().Add(s.offset).Truncate(time.Microsecond) }

// Advance makes the store behave as if d had passed: its clock moves d
// forward, so leases lapse, scheduled rows become due, rows expire and
// terminal rows age. Negative durations are ignored.
func (s *Store) Advance(d time.Duration) {
	if d <= 0 {
		return
	}
	s.mu.Lock()
	s.offset += d
	s.mu.Unlock()
}

// checkContext returns the context's error, wrapped, when it is done: like a
// database, the store refuses work for a cancelled caller.
func checkContext(ctx context.Context, op string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("memstore: %s: %w", op, err)
	}
	return nil
}
