package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"time"

	"github.com/reliar/reliar/outbox/outboxdriver"
)

// DefaultWakeupInterval is how often, by default, the watcher behind
// [Store.Wakeups] looks for new messages. An idle look is one cheap PRAGMA,
// and a watcher at this interval costs a small share of one core while
// nothing happens, mostly the Go runtime waking up for the ticker (see
// BENCHMARKS.md for the figures). A dispatcher that can wait longer for new
// messages sets a longer interval, or runs with outbox.WithoutWakeups and
// polls only.
const DefaultWakeupInterval = 10 * time.Millisecond

var _ outboxdriver.Notifier = (*Store)(nil)

// WithWakeupInterval sets how often the watcher behind [Store.Wakeups] looks
// for committed enqueues: the longest a dispatcher waits for a new message
// beyond its claim. Defaults to DefaultWakeupInterval. Each look is one
// PRAGMA data_version on the watcher's connection, plus one max(sequence)
// read from the end of the primary key when another connection committed
// something.
func WithWakeupInterval(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return fmt.Errorf("%w: WithWakeupInterval: %v is not positive", ErrInvalidOption, d)
		}
		o.wakeEvery = d
		return nil
	}
}

// watchState is what the watcher last saw.
type watchState struct {
	version  int64 // PRAGMA data_version of the watcher's connection
	sequence int64 // the outbox's largest sequence
}

// Wakeups returns a channel that receives a value after an enqueue commits,
// from this process or any other on the same file. SQLite has no
// notifications, so a watcher polls instead: every wake-up interval
// ([WithWakeupInterval]) it reads PRAGMA data_version, which changes when
// another connection commits, and on a change reads the outbox's largest
// sequence, which grows only when messages are enqueued (sequences are never
// reused). Other commits (claims, outcomes, the application's own writes)
// wake no one. Signals are coalesced: the channel has a capacity of one.
//
// Every Wakeups call of one Store shares one watcher, which fans each
// wake-up out to every subscriber's channel. It reads through a connection
// of its own, opened on the store's file with [DSN] and closed when it
// stops, so it never takes a connection from the application's pool (which
// may allow only one). The first call starts it, and fails when the file
// cannot be opened or the first reading fails; the watcher stops when the
// last subscriber's ctx is done, and the next call starts a new one. Each
// subscriber's channel is closed, as the last act of the work done for it,
// once its ctx is done and — for the last subscriber — the watcher has
// stopped, so reading until the channel is closed waits for it.
func (s *Store) Wakeups(ctx context.Context) (<-chan struct{}, error) {
	if err := ctx.Err(); err != nil {
		return nil, wrapErr("wakeups", err)
	}
	return s.wake.Subscribe(ctx, s.startWatcher)
}

// startWatcher opens the watcher's connection, reads the state it starts
// from, and runs it in a goroutine until ctx ends, calling wake; done is
// closed once the goroutine released everything.
func (s *Store) startWatcher(ctx, run context.Context, wake func()) (done <-chan struct{}, err error) {
	path, err := s.filePath(ctx)
	if err != nil {
		return nil, err
	}
	db, err := sql.Open(DriverName, DSN(path))
	if err != nil {
		return nil, wrapErr("wakeups", err)
	}
	db.SetMaxOpenConns(1)
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, wrapErr("wakeups", err)
	}
	st, err := readWatch(ctx, conn)
	if err != nil {
		conn.Close()
		db.Close()
		return nil, err
	}
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		defer db.Close()
		defer conn.Close()
		s.watch(run, conn, st, wake)
	}()
	return finished, nil
}

// filePath returns the path of the store's database file.
func (s *Store) filePath(ctx context.Context) (string, error) {
	var path string
	err := s.db.QueryRowContext(ctx, `SELECT file FROM pragma_database_list WHERE name = 'main'`).Scan(&path)
	if err != nil {
		return "", wrapErr("wakeups", err)
	}
	if path == "" {
		return "", invalidRequest("wakeups", "%s", "the database is not a file")
	}
	return path, nil
}

// watch polls conn until ctx is done, calling wake when the outbox's
// largest sequence grows.
func (s *Store) watch(ctx context.Context, conn *sql.Conn, st watchState, wake func()) {
	tick := time.NewTicker(s.wakeEvery)
	defer tick.Stop()
	failing := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		next, err := look(ctx, conn, st)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			if !failing {
				s.cfg.Log.WarnContext(ctx, "sqlitestore: wake-up watcher cannot read the database; retrying", slog.Any("error", err))
			}
			failing = true
			continue
		}
		failing = false
		if next.sequence > st.sequence {
			wake()
		}
		st = next
	}
}

// look reads the data version, and the largest sequence only when the
// version moved since st.
func look(ctx context.Context, conn *sql.Conn, st watchState) (watchState, error) {
	v, err := dataVersion(ctx, conn)
	if err != nil || v == st.version {
		return st, err
	}
	seq, err := maxSequence(ctx, conn)
	if err != nil {
		return st, err
	}
	return watchState{version: v, sequence: seq}, nil
}

// readWatch reads the data version and the largest sequence.
func readWatch(ctx context.Context, conn *sql.Conn) (watchState, error) {
	v, err := dataVersion(ctx, conn)
	if err != nil {
		return watchState{}, err
	}
	seq, err := maxSequence(ctx, conn)
	return watchState{version: v, sequence: seq}, err
}

// dataVersion reads conn's PRAGMA data_version: it changes when another
// connection, of this process or another, commits a change to the file.
func dataVersion(ctx context.Context, conn *sql.Conn) (int64, error) {
	var v int64
	if err := conn.QueryRowContext(ctx, `PRAGMA data_version`).Scan(&v); err != nil {
		return 0, wrapErr("wakeups", err)
	}
	return v, nil
}

// maxSequence reads the outbox's largest sequence, from the end of its
// primary key.
func maxSequence(ctx context.Context, conn *sql.Conn) (int64, error) {
	var seq int64
	if err := conn.QueryRowContext(ctx, `SELECT coalesce(max(sequence), 0) FROM outbox`).Scan(&seq); err != nil {
		return 0, wrapErr("wakeups", err)
	}
	return seq, nil
}
