package sqlitestore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"sync"
	"time"
)

// ErrWriteQueueTimeout is returned by BeginTx on a handle opened by Open
// when the transaction waited BusyTimeout for the other writers of the
// process — the queue's SQLITE_BUSY. It is transient: a later attempt can
// succeed. A transaction that begins another one on the same handle, in the
// same goroutine, waits for itself and ends so.
var ErrWriteQueueTimeout = errors.New("sqlitestore: waited the busy timeout for this process's other writers (database is locked)")

// SQLite lets one connection write at a time. Left to itself, a connection
// that finds the write lock taken sleeps in SQLite's busy handler, in steps
// of up to 100ms, and tries again: under a burst of writers the waits are
// long, unordered, and can end in SQLITE_BUSY. A database opened with [Open]
// queues its writers in Go instead, in one first-come, first-served line per
// handle: every read-write transaction (BeginTx) waits for its turn, for at
// most BusyTimeout like SQLite's own wait (ErrWriteQueueTimeout), so
// transactions of the process never wait in the busy handler for one
// another. The store's own writes (claims, outcome writes, renewals) go to
// the front of the line: they are short, and every committed message waits
// for them. Statements run outside a transaction, and writers in other
// processes, still meet the busy handler.

// writeLock is a mutex whose waiters are served in order, the urgent ones
// first, and whose wait ends with the caller's context.
type writeLock struct {
	mu     sync.Mutex
	held   bool
	urgent []chan struct{}
	normal []chan struct{}
}

// lock waits for the lock; urgent waiters go before every normal one.
func (l *writeLock) lock(ctx context.Context, urgent bool) error {
	l.mu.Lock()
	if !l.held {
		l.held = true
		l.mu.Unlock()
		return nil
	}
	w := make(chan struct{})
	if urgent {
		l.urgent = append(l.urgent, w)
	} else {
		l.normal = append(l.normal, w)
	}
	l.mu.Unlock()
	select {
	case <-w:
		return nil
	case <-ctx.Done():
		l.mu.Lock()
		if remove(&l.urgent, w) || remove(&l.normal, w) {
			l.mu.Unlock()
			return ctx.Err()
		}
		l.mu.Unlock()
		// The lock was handed over as the context ended: pass it on.
		l.unlock()
		return ctx.Err()
	}
}

// unlock hands the lock to the next waiter, or frees it.
func (l *writeLock) unlock() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, q := range []*[]chan struct{}{&l.urgent, &l.normal} {
		if len(*q) > 0 {
			w := (*q)[0]
			(*q)[0] = nil
			*q = (*q)[1:]
			close(w) // the lock stays held: it now belongs to w's owner
			return
		}
	}
	l.held = false
}

func remove(q *[]chan struct{}, w chan struct{}) bool {
	for i, x := range *q {
		if x == w {
			*q = append((*q)[:i], (*q)[i+1:]...)
			return true
		}
	}
	return false
}

// waitLock takes l within ctx and at most BusyTimeout, like SQLite's own
// wait for its write lock; a wait that runs out is ErrWriteQueueTimeout.
func waitLock(ctx context.Context, l *writeLock, urgent bool) error {
	wait, cancel := context.WithTimeout(ctx, BusyTimeout*time.Millisecond)
	defer cancel()
	err := l.lock(wait, urgent)
	if err != nil && ctx.Err() == nil {
		return ErrWriteQueueTimeout
	}
	return err
}

// handleLocks maps the handles opened by Open to their write lock.
var handleLocks sync.Map // *sql.DB → *writeLock

// lockFor returns db's write lock, or nil when db was not opened by Open.
func lockFor(db *sql.DB) *writeLock {
	l, _ := handleLocks.Load(db)
	wl, _ := l.(*writeLock)
	return wl
}

// storeWrite runs fn on one connection of db, holding db's write lock (when
// db has one) at the front of the line; fn's statements on conn never wait
// for the lock again. The connection is taken before the lock: whoever
// holds the lock already holds a connection, so a pool that is all taken
// cannot keep the holder waiting (the others wait for the lock with theirs).
// A wait that ends with ctx is an error of op.
func storeWrite(ctx context.Context, db *sql.DB, op string, fn func(ctx context.Context, conn *sql.Conn) error) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return wrapErr(op, err)
	}
	defer conn.Close()
	if l := lockFor(db); l != nil {
		if err := waitLock(ctx, l, true); err != nil {
			return wrapErr(op, err)
		}
		defer l.unlock()
		defer pinHeld(conn)()
	}
	return fn(ctx, conn)
}

// lockingConnector opens connections that wait for the handle's write lock,
// and checkpoints the write-ahead log in the background: SQLite's automatic
// checkpoint runs inside the COMMIT that crosses its threshold, so one
// writer in a thousand pages would hold the write lock — and every writer
// queued behind it — through the copy of the log into the database and its
// fsync. The connections turn it off; a goroutine of the handle runs a
// PASSIVE checkpoint, which takes no write lock, every checkpointEvery.
type lockingConnector struct {
	inner driver.Connector
	lock  *writeLock

	once sync.Once
	stop chan struct{}
	done chan struct{}
}

// checkpointEvery is the interval of the background checkpoints.
const checkpointEvery = 200 * time.Millisecond

func newLockingConnector(inner driver.Connector) *lockingConnector {
	return &lockingConnector{inner: inner, lock: &writeLock{}, stop: make(chan struct{}), done: make(chan struct{})}
}

func (c *lockingConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	if err := execOn(ctx, conn, "PRAGMA wal_autocheckpoint = 0"); err != nil {
		conn.Close()
		return nil, err
	}
	c.once.Do(func() { go c.checkpoints() })
	return newLockingConn(conn, c.lock), nil
}

func (c *lockingConnector) Driver() driver.Driver { return c.inner.Driver() }

// Close stops the background checkpoints; sql.DB.Close calls it.
func (c *lockingConnector) Close() error {
	c.once.Do(func() { close(c.done) }) // never started: nothing to wait for
	select {
	case <-c.stop:
	default:
		close(c.stop)
	}
	<-c.done
	return nil
}

// checkpoints runs a PASSIVE checkpoint on a connection of its own every
// checkpointEvery, until Close, and a last one then.
func (c *lockingConnector) checkpoints() {
	defer close(c.done)
	var conn driver.Conn
	defer func() {
		if conn != nil {
			conn.Close()
		}
	}()
	t := time.NewTicker(checkpointEvery)
	defer t.Stop()
	for {
		stopped := false
		select {
		case <-c.stop:
			stopped = true
		case <-t.C:
		}
		if conn == nil {
			var err error
			if conn, err = c.inner.Connect(context.Background()); err != nil {
				conn = nil
			}
		}
		if conn != nil && execOn(context.Background(), conn, "PRAGMA wal_checkpoint(PASSIVE)") != nil {
			conn.Close() // try a fresh connection next time
			conn = nil
		}
		if stopped {
			return
		}
	}
}

// execOn runs one statement on a driver connection of the modernc driver.
func execOn(ctx context.Context, conn driver.Conn, query string) error {
	e, ok := conn.(driver.ExecerContext)
	if !ok {
		return nil
	}
	_, err := e.ExecContext(ctx, query, nil)
	return err
}

// lockingConn is a connection whose read-write transactions hold the write
// lock. Only one goroutine uses it at a time (database/sql guarantees it),
// so tx needs no lock.
type lockingConn struct {
	driver.Conn
	lock *writeLock
	tx   *lockingTx // the read-write transaction holding the lock, if any
	// pinned is set while a caller that holds the lock runs a transaction
	// of its own on this connection (the store's BEGIN IMMEDIATE).
	pinned bool
	// stmts are the statements the connection keeps prepared.
	stmts stmtCache
}

// pinHeld marks conn, a connection of a handle opened by Open, as used by a
// caller that holds the write lock, until the returned func is called: its
// statements then never wait for the lock, whatever context they carry.
func pinHeld(conn *sql.Conn) (unpin func()) {
	var lc *lockingConn
	_ = conn.Raw(func(dc any) error {
		lc, _ = dc.(*lockingConn)
		if lc != nil {
			lc.pinned = true
		}
		return nil
	})
	return func() {
		if lc != nil {
			_ = conn.Raw(func(any) error { lc.pinned = false; return nil })
		}
	}
}

// The interfaces of the driver's connection that database/sql looks for;
// the modernc driver implements all of them.
type fullConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
}

func newLockingConn(conn driver.Conn, l *writeLock) driver.Conn {
	if _, ok := conn.(fullConn); !ok {
		return conn // not the driver we know: no queueing, as before
	}
	return &lockingConn{Conn: conn, lock: l}
}

func (c *lockingConn) full() fullConn { return c.Conn.(fullConn) }

func (c *lockingConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if opts.ReadOnly || c.pinned {
		return c.full().BeginTx(ctx, opts)
	}
	if err := waitLock(ctx, c.lock, false); err != nil {
		return nil, err
	}
	tx, err := c.full().BeginTx(ctx, opts)
	if err != nil {
		c.lock.unlock()
		return nil, err
	}
	c.tx = &lockingTx{Tx: tx, c: c}
	return c.tx, nil
}

func (c *lockingConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return c.full().PrepareContext(ctx, query)
}

func (c *lockingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	return c.execCached(ctx, query, args)
}

func (c *lockingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	return c.queryCached(ctx, query, args)
}

// Close releases the lock of a transaction that never ended (a connection
// closed under it), finalizes the prepared statements, then closes the
// driver's connection.
func (c *lockingConn) Close() error {
	if c.tx != nil {
		c.tx.end()
	}
	c.stmts.close()
	return c.Conn.Close()
}

// ResetSession, IsValid and CheckNamedValue pass through when the driver's
// connection has them.

func (c *lockingConn) ResetSession(ctx context.Context) error {
	if r, ok := c.Conn.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

func (c *lockingConn) IsValid() bool {
	if v, ok := c.Conn.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

func (c *lockingConn) CheckNamedValue(nv *driver.NamedValue) error {
	if ch, ok := c.Conn.(driver.NamedValueChecker); ok {
		return ch.CheckNamedValue(nv)
	}
	return driver.ErrSkip
}

// lockingTx releases the write lock when it ends, once.
type lockingTx struct {
	driver.Tx
	c    *lockingConn
	done bool
}

func (t *lockingTx) Commit() error {
	err := t.Tx.Commit()
	t.end()
	return err
}

func (t *lockingTx) Rollback() error {
	err := t.Tx.Rollback()
	t.end()
	return err
}

func (t *lockingTx) end() {
	if !t.done {
		t.done = true
		t.c.tx = nil
		t.c.lock.unlock()
	}
}
