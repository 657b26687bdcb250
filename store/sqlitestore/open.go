package sqlitestore

import (
	"database/sql"
	"fmt"
	"net/url"

	// The modernc.org/sqlite driver registers itself as "sqlite".
	"modernc.org/sqlite"
)

// DriverName is the database/sql driver name that [Open] uses: the
// modernc.org/sqlite driver, pure Go, registered by importing this package.
const DriverName = "sqlite"

// BusyTimeout is how long, in milliseconds, a connection opened with [DSN]
// waits for another connection's write lock before failing with SQLITE_BUSY.
const BusyTimeout = 10000

// DSN returns the data source name of the database file at path with the
// settings the store relies on: WAL journaling, synchronous=FULL (a commit
// survives power loss; NORMAL is faster but may lose the last commits), a
// busy timeout of [BusyTimeout] milliseconds, foreign keys on, and
// _txlock=immediate so every read-write transaction begins with BEGIN
// IMMEDIATE. Use it with sql.Open([DriverName], DSN(path)) to open a handle of
// your own.
func DSN(path string) string {
	q := url.Values{}
	// Order matters: the busy timeout must be in force before the switch to
	// WAL, which takes a lock.
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", BusyTimeout))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(FULL)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Set("_txlock", "immediate")
	u := url.URL{Scheme: "file", Path: path, RawQuery: q.Encode()}
	if len(path) > 0 && path[0] != '/' {
		// A relative path: "file:name.db", not "file:///name.db".
		u.Opaque = url.PathEscape(path)
	}
	return u.String()
}

// Open opens the SQLite database file at path (creating it when missing)
// with the settings of [DSN], and checks that it can be used. The caller owns
// the returned handle and closes it.
//
// The handle queues its writers in Go: a read-write transaction, or a
// statement run outside a transaction with ExecContext, waits for the
// writer before it, first come first served, instead of sleeping in
// SQLite's busy handler; the store's own writes go first. Under a burst of
// producers this keeps commit → delivery latency to the queue's length and
// never fails a producer with SQLITE_BUSY. A handle opened with
// sql.Open(DriverName, DSN(path)) works with the store too, without the
// queue. Writers in other processes still meet the busy handler.
//
// Its connections also keep the statements they run prepared (up to 64 per
// connection, the least recently used dropped first), where the driver
// would parse and plan each statement again at every use: the store's
// claims and outcome writes, and the producers' inserts, hold the write
// lock for less time. Your own statements on the handle benefit too.
func Open(path string) (*sql.DB, error) {
	if path == "" || path == ":memory:" {
		return nil, fmt.Errorf("sqlitestore: open %q: a database file path is required", path)
	}
	inner, err := sqlite.NewConnector(DSN(path))
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: open %s: %w", path, err)
	}
	conn := newLockingConnector(inner)
	db := sql.OpenDB(conn)
	handleLocks.Store(db, conn.lock)
	// Connections are opened lazily; open one now so that a bad path or a
	// file that is not a database fails here, not at the first claim.
	if err := db.Ping(); err != nil {
		db.Close()
		handleLocks.Delete(db)
		return nil, fmt.Errorf("sqlitestore: open %s: %w", path, err)
	}
	return db, nil
}
