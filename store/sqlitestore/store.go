package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
	"github.com/reliar/reliar/outbox/outboxdriver/outboxsql"
)

// Store is the SQLite outbox store. It implements outboxdriver.Store (and so
// outboxdriver.DeadLetters) over a *sql.DB the caller owns. It is safe for
// concurrent use.
type Store struct {
	db        *sql.DB
	now       func() time.Time
	cfg       outboxsql.Settings
	wakeEvery time.Duration
	// async: the dispatch writes commit with synchronous=NORMAL
	// (WithAsyncCommit on a database in WAL mode).
	async bool
	// wake is the one watcher every Wakeups call shares.
	wake outboxdriver.WakeHub
}

var _ outboxdriver.Store = (*Store)(nil)

// ErrNotMigrated is matched (with errors.Is) by a *NotMigratedError: it is
// outboxdriver.ErrNotMigrated, which every store's not-migrated error matches.
var ErrNotMigrated = outboxdriver.ErrNotMigrated

// NotMigratedError is what New returns for a database behind [SchemaVersion]
// (Store "sqlitestore"): run [Migrate], or `reliar migrate`.
type NotMigratedError = outboxdriver.NotMigratedError

// Option configures a Store. The same options may be given to New and to
// Migrate (which uses none of them today, so that one option list serves
// both). Every option validates its argument: a refused one wraps
// ErrInvalidOption.
type Option func(*options) error

// options is what the options set.
type options struct {
	cfg       outboxsql.Settings
	now       func() time.Time
	wakeEvery time.Duration
	async     bool
}

// applyOptions returns the defaults with opts applied.
func applyOptions(opts []Option) (*options, error) {
	o := &options{
		cfg:       outboxsql.NewSettings("sqlitestore", ErrInvalidOption),
		now:       time.Now,
		wakeEvery: DefaultWakeupInterval,
	}
	for _, opt := range opts {
		if opt == nil {
			continue
		}
		if err := opt(o); err != nil {
			return nil, err
		}
	}
	return o, nil
}

// WithClock sets the clock the store reads every time from. Defaults to
// time.Now. The clock must be shared by every store on the same file.
func WithClock(now func() time.Time) Option {
	return func(o *options) error {
		if now == nil {
			return fmt.Errorf("%w: WithClock: nil clock", ErrInvalidOption)
		}
		o.now = now
		return nil
	}
}

// WithSerializer sets the serializer Enqueue encodes bodies with. Defaults
// to reliar.JSON.
func WithSerializer(ser reliar.Serializer) Option {
	return func(o *options) error { return o.cfg.SetSerializer(ser) }
}

// WithMaxPayloadBytes sets the largest payload Enqueue accepts. Defaults to
// outboxdriver.DefaultMaxPayloadBytes (1 MiB).
func WithMaxPayloadBytes(n int) Option {
	return func(o *options) error { return o.cfg.SetMaxPayload(n) }
}

// WithLogger sets the logger for debug messages, such as outcome writes that
// matched fewer rows than asked (their leases were lost). Defaults to
// slog.Default().
func WithLogger(l *slog.Logger) Option {
	return func(o *options) error { return o.cfg.SetLogger(l) }
}

// New returns a store over db after checking that the schema is migrated: a
// database behind this release fails with a *NotMigratedError.
func New(ctx context.Context, db *sql.DB, opts ...Option) (*Store, error) {
	if db == nil {
		return nil, fmt.Errorf("%w: nil *sql.DB", ErrInvalidOption)
	}
	o, err := applyOptions(opts)
	if err != nil {
		return nil, err
	}
	s := &Store{db: db, now: o.now, cfg: o.cfg, wakeEvery: o.wakeEvery, async: o.async}
	if err := schema.Check(ctx, db); err != nil {
		return nil, err
	}
	if s.async {
		if err := checkWAL(ctx, db); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Capabilities reports per-key ordering and wake-ups ([Store.Wakeups]); the
// store has no maintenance lock (SQLite serialises writers, and a purge pass
// is bounded and safe to run from several processes).
func (s *Store) Capabilities() outboxdriver.Capabilities {
	return outboxdriver.Capabilities{PerKeyOrdering: true, Notify: true}
}

// DB returns the handle the store works on.
func (s *Store) DB() *sql.DB { return s.db }

// clock returns the store's current time in microseconds.
func (s *Store) clock() int64 { return s.now().UnixMicro() }
