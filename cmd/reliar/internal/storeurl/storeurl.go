// Package storeurl turns a database URL into an outbox store: the URL's
// scheme picks the driver (postgres:// and postgresql:// for PostgreSQL,
// sqlite:// for SQLite, mysql:// and mariadb:// for MariaDB), which parses
// the rest, opens the database, runs the migrations and opens the store.
//
// Every command that takes --database-url goes through [Parse]; adding a
// store means writing one driver file (see postgres.go for the model) and
// listing it in drivers.go.
package storeurl

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/cmd/reliar/internal/redact"
	"github.com/reliar/reliar/outbox"
)

// ErrBadURL is matched (with errors.Is) by every error about a database URL
// that cannot be used: malformed, of an unknown scheme, or missing a part.
var ErrBadURL = errors.New("bad database URL")

// ErrBadOption is matched (with errors.Is) by an option the store does not
// support, such as a schema for SQLite.
var ErrBadOption = errors.New("bad store option")

// URLError reports a database URL that cannot be used.
type URLError struct {
	// URL is the URL with its secrets redacted.
	URL string
	// Reason says what is wrong with it.
	Reason string
}

func (e *URLError) Error() string {
	if e.URL == "" {
		return "database URL: " + e.Reason
	}
	return fmt.Sprintf("database URL %s: %s", e.URL, e.Reason)
}

// Is matches ErrBadURL.
func (e *URLError) Is(target error) bool { return target == ErrBadURL }

// badURL builds a *URLError for raw, redacted: see redact.Reason.
func badURL(raw, format string, args ...any) error {
	return &URLError{URL: redact.URL(raw), Reason: redact.Reason(raw, fmt.Sprintf(format, args...))}
}

// Location is a parsed database URL and the driver that serves its scheme.
type Location struct {
	drv driver
	url *url.URL
	raw string
}

// Parse parses a database URL and checks that a driver serves its scheme
// and that the driver can use the rest. It does not connect.
func Parse(raw string) (Location, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return Location{}, badURL(raw, "empty (want %s)", schemeList())
	}
	if !hasScheme(raw) {
		// host:port/db, or user:password@host/db: url.Parse would read the
		// text before the first colon as a scheme, or fail on the colon.
		// Its password, if any, is masked as it would be behind a scheme.
		shown := strings.TrimPrefix(redact.URL("postgres://"+raw), "postgres://")
		return Location{}, &URLError{URL: shown, Reason: fmt.Sprintf("no scheme: a database URL starts with one of %s, such as postgres://user@host:5432/db or sqlite://orders.db", schemeList())}
	}
	u, err := url.Parse(raw)
	if err != nil {
		// url.Parse quotes the whole URL in its error; keep only the reason.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return Location{}, badURL(raw, "%v", err)
	}
	if u.Scheme == "" {
		return Location{}, badURL(raw, "no scheme (want %s)", schemeList())
	}
	if redact.Unparsable(raw) {
		// It parsed, but not as its writer meant: an unescaped # or ? in
		// the password makes the rest a fragment or a query.
		return Location{}, badURL(raw, "it does not parse as its writer meant")
	}
	scheme := strings.ToLower(u.Scheme)
	// Drivers see the scheme in lower case, whatever the user typed.
	raw = scheme + raw[len(u.Scheme):]
	u.Scheme = scheme
	for _, d := range drivers {
		for _, s := range d.schemes() {
			if s == scheme {
				if err := d.validate(u, raw); err != nil {
					return Location{}, err
				}
				return Location{drv: d, url: u, raw: raw}, nil
			}
		}
	}
	return Location{}, badURL(raw, "unknown scheme %q (want %s)", u.Scheme, schemeList())
}

// hasScheme reports whether raw starts with a scheme: one followed by
// "://", or one of the drivers' schemes followed by ":".
func hasScheme(raw string) bool {
	name, _, ok := strings.Cut(raw, ":")
	if !ok || name == "" {
		return false
	}
	if strings.Contains(raw, "://") && !strings.ContainsAny(name, "/@") {
		return true
	}
	for _, d := range drivers {
		for _, s := range d.schemes() {
			if strings.EqualFold(s, name) {
				return true
			}
		}
	}
	return false
}

// schemeList names every supported scheme, for messages.
func schemeList() string {
	var all []string
	for _, d := range drivers {
		for _, s := range d.schemes() {
			all = append(all, s+"://")
		}
	}
	return strings.Join(all, ", ")
}

// Driver names the store behind the location: "postgres", "sqlite", ...
func (l Location) Driver() string { return l.drv.name() }

// String returns the URL with its secrets redacted.
func (l Location) String() string { return redact.URL(l.raw) }

// Options configure the store a Location opens.
type Options struct {
	// Schema is the PostgreSQL schema of the outbox table; empty means the
	// store's default. Stores without schemas refuse a non-empty Schema
	// with an error matching ErrBadOption.
	Schema string
	// Logger receives the store's logs. Defaults to slog.Default().
	Logger *slog.Logger
	// MaxConns caps the connections the backend opens; zero keeps the
	// driver's default (16 on PostgreSQL unless the URL sets
	// pool_max_conns, no cap on SQLite and MariaDB).
	//
	// On SQLite, which lets one writer in at a time, a small cap is the
	// fair choice for a process that both writes and dispatches: writers
	// queue in database/sql, first come first served, instead of racing
	// through SQLite's busy handler, whose growing sleeps let a busy writer
	// starve the dispatcher's claims for hundreds of milliseconds. The
	// wake-up listener — one per store, however many dispatchers share it
	// (LISTEN on PostgreSQL, the watcher on SQLite) — holds a connection of
	// its own, outside this cap (see Location.ListenerConns).
	MaxConns int
	// AsyncCommit commits the store's claims and outcome writes without
	// waiting for the disk (sqlitestore.WithAsyncCommit,
	// pgstore.WithAsyncCommit): a crash of the machine can undo the last
	// of them, which republishes, never loses, a message. The MariaDB
	// store has no such mode and refuses it with an error matching
	// ErrBadOption.
	AsyncCommit bool
}

func (o Options) logger() *slog.Logger {
	if o.Logger == nil {
		return slog.Default()
	}
	return o.Logger
}

// DefaultPoolSize is the PostgreSQL pool's size unless the URL's
// pool_max_conns or Options.MaxConns says otherwise.
const DefaultPoolSize = pgMaxConns

// PoolSize returns the most connections the pool of a backend opened with
// opts holds: Options.MaxConns when set, else the URL's setting or the
// driver's default; 0 when the driver sets no cap (SQLite, MariaDB). It
// does not connect.
func (l Location) PoolSize(opts Options) int {
	if l.drv == nil {
		return 0
	}
	if opts.MaxConns > 0 {
		return opts.MaxConns
	}
	return l.drv.poolSize(l)
}

// ListenerConns returns the connections the store's wake-up listener
// holds, outside the pool: one on PostgreSQL (LISTEN) and SQLite (the
// watcher), none on MariaDB, which has no wake-ups. A store holds one
// listener whatever the number of dispatchers sharing it.
func (l Location) ListenerConns() int {
	if l.drv == nil {
		return 0
	}
	return l.drv.listenerConns()
}

// Open connects to the database. The caller closes the returned Backend.
func (l Location) Open(ctx context.Context, opts Options) (Backend, error) {
	return l.drv.open(ctx, l, opts, false)
}

// OpenScratch connects to a fresh, empty part of the database that Close
// removes again: a new schema on PostgreSQL (opts.Schema is ignored), a new
// file on SQLite (which must not exist yet). The demo runs in one.
func (l Location) OpenScratch(ctx context.Context, opts Options) (Backend, error) {
	return l.drv.open(ctx, l, opts, true)
}

// MigrationSQL returns the store's migrations as SQL text, in the order
// they apply, without connecting.
func (l Location) MigrationSQL(opts Options) ([]SQLFile, error) {
	return l.drv.migrationSQL(opts)
}

// SQLFile is one migration file.
type SQLFile struct {
	// Name is the file name, such as 0001_outbox.up.sql.
	Name string
	// SQL is the file's text.
	SQL string
}

// Migration reports what Migrate did.
type Migration struct {
	// From is the schema version before, 0 for an empty database.
	From int `json:"from"`
	// To is the schema version after.
	To int `json:"to"`
}

// Backend is an open database with the outbox store on it.
type Backend interface {
	// Describe names the store and where it lives, secrets redacted, for
	// summaries: `postgres 127.0.0.1:5432/test schema "public"`.
	Describe() string
	// Migrate applies the store's migrations; it is idempotent.
	Migrate(ctx context.Context) (Migration, error)
	// Store opens the outbox store (once; later calls return the same). The
	// schema must be migrated.
	Store(ctx context.Context) (outbox.Store, error)
	// Begin starts a transaction on the database, in which business rows
	// and outbox messages commit together.
	Begin(ctx context.Context) (Tx, error)
	// Dialect spells SQL for this database.
	Dialect() Dialect
	// CountPublished counts the outbox rows published after from and at
	// or before to, by the store's clock (rows purged since are not
	// counted): the publish rate of the admin page.
	CountPublished(ctx context.Context, from, to time.Time) (int64, error)
	// Close releases the connections; for a scratch backend it first
	// removes everything the backend created.
	Close(ctx context.Context) error
}

// WriteChecker is implemented by backends that can tell whether the store
// takes a dispatcher's claims and outcome writes: not a read-only server,
// a role with the privileges. The relay's readiness asks it.
type WriteChecker interface {
	CheckWritable(ctx context.Context) error
}

// Tx is one transaction of a Backend.
type Tx interface {
	// Exec runs one statement written for the backend's Dialect.
	Exec(ctx context.Context, sql string, args ...any) error
	// Enqueue writes messages to the outbox inside the transaction.
	Enqueue(ctx context.Context, msgs ...reliar.Outgoing) ([]reliar.MessageID, error)
	// Commit commits the transaction.
	Commit(ctx context.Context) error
	// Rollback rolls it back; after Commit it does nothing.
	Rollback(ctx context.Context) error
}

// Dialect spells the parts of SQL that differ between databases.
type Dialect struct {
	// Bind returns the placeholder of the n-th (1-based) parameter.
	Bind func(n int) string
	// Table returns the name of a table of the backend, qualified and
	// quoted as needed.
	Table func(name string) string
}

// questionMarks binds every parameter as "?".
func questionMarks(int) string { return "?" }

// driver serves the URL schemes of one store.
type driver interface {
	// name names the store: "postgres", "sqlite".
	name() string
	// schemes lists the URL schemes the driver serves, in lower case.
	schemes() []string
	// validate checks a URL of one of the schemes without connecting; an
	// error matches ErrBadURL.
	validate(u *url.URL, raw string) error
	// open connects; with scratch, to a fresh part of the database that
	// Close removes.
	open(ctx context.Context, l Location, opts Options, scratch bool) (Backend, error)
	// migrationSQL renders the migrations for opts.
	migrationSQL(opts Options) ([]SQLFile, error)
	// poolSize is the pool's cap without Options.MaxConns; 0 for none.
	poolSize(l Location) int
	// listenerConns counts the wake-up listener's connections.
	listenerConns() int
}
