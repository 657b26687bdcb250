package mysqlstore

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

// Store is the MariaDB outbox store. It implements outboxdriver.Store (and so
// outboxdriver.DeadLetters) and outboxdriver.MaintenanceLocker over a *sql.DB the caller
// owns. It is safe for concurrent use.
type Store struct {
	db  *sql.DB
	cfg outboxsql.Settings
}

var (
	_ outboxdriver.Store             = (*Store)(nil)
	_ outboxdriver.MaintenanceLocker = (*Store)(nil)
)

// ErrNotMigrated is matched (with errors.Is) by a *NotMigratedError: it is
// outboxdriver.ErrNotMigrated, which every store's not-migrated error matches.
var ErrNotMigrated = outboxdriver.ErrNotMigrated

// NotMigratedError is what New returns for a database behind [SchemaVersion]
// (Store "mysqlstore"): run [Migrate], or `reliar migrate`.
type NotMigratedError = outboxdriver.NotMigratedError

// Option configures a Store. The same options may be given to New and to
// Migrate (which uses none of them today, so that one option list serves
// both). Every option validates its argument: a refused one wraps
// ErrInvalidOption.
type Option func(*options) error

// options is what the options set.
type options struct {
	cfg outboxsql.Settings
}

// applyOptions returns the defaults with opts applied.
func applyOptions(opts []Option) (*options, error) {
	o := &options{cfg: outboxsql.NewSettings("mysqlstore", ErrInvalidOption)}
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

// New returns a store over db after checking the handle and the schema: the
// DSN must set parseTime=true and keep loc=UTC (an error matching
// ErrInvalidOption otherwise), and a database behind this release fails with
// a *NotMigratedError.
func New(ctx context.Context, db *sql.DB, opts ...Option) (*Store, error) {
	if db == nil {
		return nil, fmt.Errorf("%w: nil *sql.DB", ErrInvalidOption)
	}
	o, err := applyOptions(opts)
	if err != nil {
		return nil, err
	}
	s := &Store{db: db, cfg: o.cfg}
	if err := checkTimes(ctx, db); err != nil {
		return nil, err
	}
	if err := schema.Check(ctx, db); err != nil {
		return nil, err
	}
	return s, nil
}

// checkTimes makes sure the driver reads DATETIME columns as time.Time in
// UTC: parseTime=true and loc=UTC.
func checkTimes(ctx context.Context, db *sql.DB) error {
	var probe any
	if err := db.QueryRowContext(ctx, `SELECT UTC_TIMESTAMP(6)`).Scan(&probe); err != nil {
		return fmt.Errorf("mysqlstore: new: %w", wrapErr("check clock", err))
	}
	t, ok := probe.(time.Time)
	if !ok {
		return fmt.Errorf("%w: the DSN must set parseTime=true", ErrInvalidOption)
	}
	if t.Location() != time.UTC {
		return fmt.Errorf("%w: the DSN must keep loc=UTC, not %s", ErrInvalidOption, t.Location())
	}
	return nil
}

// Capabilities reports the maintenance lock. Per-key ordering is not offered
// (see the package documentation) and there are no wake-up notifications.
func (s *Store) Capabilities() outboxdriver.Capabilities {
	return outboxdriver.Capabilities{MaintenanceLock: true}
}

// DB returns the handle the store works on.
func (s *Store) DB() *sql.DB { return s.db }
