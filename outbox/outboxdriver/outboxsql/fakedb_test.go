package outboxsql

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
)

// fakeDB is a database/sql driver that records the statements it runs and
// answers queries from a script, so that the shared code is tested without
// a real database (the root module may import no driver).
type fakeDB struct {
	mu    sync.Mutex
	execs []fakeCall
	// execErr fails the statements it returns an error for.
	execErr func(query string) error
	// answer returns the columns and rows of a query, or its error.
	answer func(query string, args []any) ([]string, [][]driverValue, error)
}

// fakeCall is one statement run.
type fakeCall struct {
	query string
	args  []any
}

// open returns a *sql.DB over f, closed when the test ends.
func (f *fakeDB) open(t *testing.T) *sql.DB {
	t.Helper()
	db := sql.OpenDB(fakeConnector{f})
	t.Cleanup(func() { db.Close() })
	return db
}

// calls returns the statements run so far.
func (f *fakeDB) calls() []fakeCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]fakeCall(nil), f.execs...)
}

type fakeConnector struct{ db *fakeDB }

func (c fakeConnector) Connect(context.Context) (driver.Conn, error) { return fakeConn{c.db}, nil }
func (c fakeConnector) Driver() driver.Driver                        { return fakeDriver{} }

type fakeDriver struct{}

func (fakeDriver) Open(string) (driver.Conn, error) { return nil, errors.New("use the connector") }

type fakeConn struct{ db *fakeDB }

func (fakeConn) Prepare(string) (driver.Stmt, error) { return nil, errors.New("prepare unsupported") }
func (fakeConn) Close() error                        { return nil }
func (fakeConn) Begin() (driver.Tx, error)           { return fakeTx{}, nil }

func (c fakeConn) ExecContext(_ context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	c.db.mu.Lock()
	defer c.db.mu.Unlock()
	c.db.execs = append(c.db.execs, fakeCall{query: query, args: values(args)})
	if c.db.execErr != nil {
		if err := c.db.execErr(query); err != nil {
			return nil, err
		}
	}
	return driver.RowsAffected(strings.Count(query, "(?")), nil
}

func (c fakeConn) QueryContext(_ context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if c.db.answer == nil {
		return nil, errors.New("no answer scripted")
	}
	cols, rows, err := c.db.answer(query, values(args))
	if err != nil {
		return nil, err
	}
	return &fakeRows{cols: cols, rows: rows}, nil
}

func values(args []driver.NamedValue) []any {
	out := make([]any, len(args))
	for i, a := range args {
		out[i] = a.Value
	}
	return out
}

type fakeTx struct{}

func (fakeTx) Commit() error   { return nil }
func (fakeTx) Rollback() error { return nil }

// fakeRows serves scripted rows; a row holding errRowValue fails Next.
type fakeRows struct {
	cols []string
	rows [][]driverValue
}

// errRow is a scripted row that makes Next fail.
var errRow = errors.New("fake: broken row")

func (r *fakeRows) Columns() []string { return r.cols }
func (r *fakeRows) Close() error      { return nil }
func (r *fakeRows) Next(dest []driver.Value) error {
	if len(r.rows) == 0 {
		return io.EOF
	}
	row := r.rows[0]
	r.rows = r.rows[1:]
	if len(row) == 1 && row[0] == errRow {
		return errRow
	}
	copy(dest, row)
	return nil
}

// driverValue is a column value of a scripted row.
type driverValue = driver.Value
