package sqlitestore

import (
	"context"
	"database/sql/driver"
	"reflect"
)

// The modernc driver prepares every statement it is given as a string
// again, each time: SQLite parses and plans it, then finalizes it after one
// use. For the store's claim, a statement of two dozen columns, that was
// several times the cost of running it (BENCHMARKS.md, "SQLite: prepared
// statements"), paid while the write lock is held. The connections of a
// handle opened by Open therefore keep the statements they run prepared, up
// to stmtCacheSize of them, the least recently used dropped first; the
// store's own statements and the producers' are a handful, so they stay.

// stmtCacheSize bounds the statements a connection keeps prepared.
const stmtCacheSize = 64

// cachedStmt is a statement a connection keeps prepared.
type cachedStmt struct {
	st       driver.Stmt
	query    string
	lastUse  uint64
	busy     bool // its rows are open: it cannot run again until they close
	evicted  bool // dropped from the cache while busy: close it when its rows close
	exec     driver.StmtExecContext
	queryCtx driver.StmtQueryContext
}

// stmtCache is a connection's prepared statements. A connection is used by
// one goroutine at a time, so it needs no lock.
type stmtCache struct {
	byQuery map[string]*cachedStmt
	clock   uint64
}

// get returns the prepared statement of query, preparing it on conn when
// the cache does not hold it, or nil when it cannot be used now (its rows
// are still open, or the driver's statement lacks the context methods):
// the caller then runs query unprepared, as before.
func (c *stmtCache) get(ctx context.Context, conn driver.ConnPrepareContext, query string) (*cachedStmt, error) {
	c.clock++
	if s := c.byQuery[query]; s != nil {
		if s.busy {
			return nil, nil
		}
		s.lastUse = c.clock
		return s, nil
	}
	st, err := conn.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	exec, okExec := st.(driver.StmtExecContext)
	q, okQuery := st.(driver.StmtQueryContext)
	if !okExec || !okQuery {
		st.Close()
		return nil, nil
	}
	if c.byQuery == nil {
		c.byQuery = make(map[string]*cachedStmt)
	}
	if len(c.byQuery) >= stmtCacheSize {
		c.evictOldest()
	}
	s := &cachedStmt{st: st, query: query, lastUse: c.clock, exec: exec, queryCtx: q}
	c.byQuery[query] = s
	return s, nil
}

// evictOldest drops the least recently used statement; one whose rows are
// open is closed when they close.
func (c *stmtCache) evictOldest() {
	var oldest *cachedStmt
	for _, s := range c.byQuery {
		if oldest == nil || s.lastUse < oldest.lastUse {
			oldest = s
		}
	}
	delete(c.byQuery, oldest.query)
	if oldest.busy {
		oldest.evicted = true
		return
	}
	oldest.st.Close()
}

// close finalizes every statement; the connection is closing. database/sql
// never closes a connection whose rows are open, but should a statement
// still be busy, it is left alone: finalizing it after the connection has
// closed would touch freed memory.
func (c *stmtCache) close() {
	for q, s := range c.byQuery {
		delete(c.byQuery, q)
		if !s.busy {
			s.st.Close()
		}
	}
}

// execCached runs query as a prepared statement of c when it can, and
// unprepared otherwise.
func (c *lockingConn) execCached(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	s, err := c.stmts.get(ctx, c.full(), query)
	if err != nil {
		return nil, err
	}
	if s == nil {
		return c.full().ExecContext(ctx, query, args)
	}
	s.busy = true
	defer s.release()
	return s.exec.ExecContext(ctx, args)
}

// queryCached runs query as a prepared statement of c when it can, and
// unprepared otherwise.
func (c *lockingConn) queryCached(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	s, err := c.stmts.get(ctx, c.full(), query)
	if err != nil {
		return nil, err
	}
	if s == nil {
		return c.full().QueryContext(ctx, query, args)
	}
	s.busy = true
	rows, err := s.queryCtx.QueryContext(ctx, args)
	if err != nil {
		s.release()
		return nil, err
	}
	return &cachedRows{Rows: rows, s: s}, nil
}

// release makes s usable again, or closes it if it was dropped meanwhile.
func (s *cachedStmt) release() {
	s.busy = false
	if s.evicted {
		s.st.Close()
	}
}

// cachedRows are the rows of a prepared statement of the cache, which they
// give back when closed. The driver's optional column type methods pass
// through.
type cachedRows struct {
	driver.Rows
	s      *cachedStmt
	closed bool
}

func (r *cachedRows) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	err := r.Rows.Close()
	r.s.release()
	return err
}

func (r *cachedRows) ColumnTypeDatabaseTypeName(i int) string {
	if t, ok := r.Rows.(driver.RowsColumnTypeDatabaseTypeName); ok {
		return t.ColumnTypeDatabaseTypeName(i)
	}
	return ""
}

func (r *cachedRows) ColumnTypeLength(i int) (int64, bool) {
	if t, ok := r.Rows.(driver.RowsColumnTypeLength); ok {
		return t.ColumnTypeLength(i)
	}
	return 0, false
}

func (r *cachedRows) ColumnTypeNullable(i int) (nullable, ok bool) {
	if t, ok := r.Rows.(driver.RowsColumnTypeNullable); ok {
		return t.ColumnTypeNullable(i)
	}
	return false, false
}

func (r *cachedRows) ColumnTypePrecisionScale(i int) (precision, scale int64, ok bool) {
	if t, ok := r.Rows.(driver.RowsColumnTypePrecisionScale); ok {
		return t.ColumnTypePrecisionScale(i)
	}
	return 0, 0, false
}

func (r *cachedRows) ColumnTypeScanType(i int) reflect.Type {
	if t, ok := r.Rows.(driver.RowsColumnTypeScanType); ok {
		return t.ColumnTypeScanType(i)
	}
	return reflect.TypeFor[any]()
}
