package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
)

// openOneConn opens a handle with Open, limited to one connection, with a
// table t(k INTEGER PRIMARY KEY, v TEXT) holding three rows.
func openOneConn(t *testing.T) *sql.DB {
	t.Helper()
	return openOneConnAt(t, filepath.Join(t.TempDir(), "cache.db"))
}

// openOneConnAt is openOneConn on the database file at path.
func openOneConnAt(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`CREATE TABLE t(k INTEGER PRIMARY KEY, v TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c')`); err != nil {
		t.Fatal(err)
	}
	return db
}

// theConn takes the handle's one connection until the test ends or it is
// closed.
func theConn(t *testing.T, db *sql.DB) *sql.Conn {
	t.Helper()
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// cacheOf returns the statement cache of the handle's one connection.
func cacheOf(t *testing.T, db *sql.DB) map[string]*cachedStmt {
	t.Helper()
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var out map[string]*cachedStmt
	if err := conn.Raw(func(dc any) error {
		lc, ok := dc.(*lockingConn)
		if !ok {
			return fmt.Errorf("connection is a %T, not a *lockingConn", dc)
		}
		out = lc.stmts.byQuery
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// A statement run twice on a connection is prepared once.
func TestStatementsStayPrepared(t *testing.T) {
	db := openOneConn(t)
	const q = `SELECT v FROM t WHERE k = ?`
	var v string
	if err := db.QueryRow(q, 2).Scan(&v); err != nil || v != "b" {
		t.Fatalf("first run: %q, %v", v, err)
	}
	first := cacheOf(t, db)[q]
	if first == nil {
		t.Fatal("the statement is not kept prepared")
	}
	if err := db.QueryRow(q, 3).Scan(&v); err != nil || v != "c" {
		t.Fatalf("second run: %q, %v", v, err)
	}
	if again := cacheOf(t, db)[q]; again != first {
		t.Fatal("the statement was prepared again")
	}
	if _, err := db.Exec(`UPDATE t SET v = ? WHERE k = ?`, "x", 1); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE t SET v = ? WHERE k = ?`, "y", 1); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(q, 1).Scan(&v); err != nil || v != "y" {
		t.Fatalf("after the updates: %q, %v", v, err)
	}
}

// A statement whose rows are still open runs again unprepared, and both
// results are whole.
func TestStatementRunAgainWhileItsRowsAreOpen(t *testing.T) {
	db := openOneConn(t)
	ctx := context.Background()
	conn := theConn(t, db)
	const q = `SELECT k, v FROM t ORDER BY k`
	outer, err := conn.QueryContext(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for outer.Next() {
		var k int
		var v string
		if err := outer.Scan(&k, &v); err != nil {
			t.Fatal(err)
		}
		inner, err := conn.QueryContext(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for inner.Next() {
			n++
		}
		if err := inner.Close(); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%d%s:%d", k, v, n))
	}
	if err := outer.Err(); err != nil {
		t.Fatal(err)
	}
	if err := outer.Close(); err != nil {
		t.Fatal(err)
	}
	if want := "[1a:3 2b:3 3c:3]"; fmt.Sprint(got) != want {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// The cache is bounded: the least recently used statement goes first, and
// one whose rows are open when it goes still reads to the end.
func TestStatementCacheIsBounded(t *testing.T) {
	db := openOneConn(t)
	ctx := context.Background()
	conn := theConn(t, db)
	const open = `SELECT v FROM t ORDER BY k`
	rows, err := conn.QueryContext(ctx, open)
	if err != nil {
		t.Fatal(err)
	}
	for i := range stmtCacheSize + 10 {
		var n int
		if err := conn.QueryRowContext(ctx, fmt.Sprintf("SELECT %d", i)).Scan(&n); err != nil || n != i {
			t.Fatalf("SELECT %d: %d, %v", i, n, err)
		}
	}
	var vs []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		vs = append(vs, v)
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(vs) != "[a b c]" {
		t.Fatalf("the evicted statement's rows read %v", vs)
	}
	conn.Close()
	cache := cacheOf(t, db)
	if len(cache) > stmtCacheSize {
		t.Fatalf("%d statements kept, more than %d", len(cache), stmtCacheSize)
	}
	if cache[open] != nil {
		t.Fatal("the least recently used statement was kept")
	}
}

// A prepared statement that failed runs again, and column types come
// through.
func TestPreparedStatementAfterAnError(t *testing.T) {
	db := openOneConn(t)
	const ins = `INSERT INTO t VALUES (?, ?)`
	if _, err := db.Exec(ins, 1, "dup"); err == nil {
		t.Fatal("a duplicate key was inserted")
	}
	if _, err := db.Exec(ins, 4, "d"); err != nil {
		t.Fatalf("the statement after its failure: %v", err)
	}
	rows, err := db.Query(`SELECT k, v FROM t WHERE k = 4`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	types, err := rows.ColumnTypes()
	if err != nil {
		t.Fatal(err)
	}
	if got := types[0].DatabaseTypeName() + "," + types[1].DatabaseTypeName(); got != "INTEGER,TEXT" {
		t.Fatalf("column types %s", got)
	}
}

// A PRAGMA takes effect when SQLite compiles it; SQLite compiles a prepared
// PRAGMA again at every run, so one run again from the cache still takes
// effect, and a read of the setting is current (WithAsyncCommit switches
// synchronous back and forth on a connection with exactly these statements).
func TestCachedPragmaTakesEffectEachTime(t *testing.T) {
	db := openOneConn(t)
	ctx := context.Background()
	conn := theConn(t, db)
	read := func() int {
		var v int
		if err := conn.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	for i := range 3 {
		if _, err := conn.ExecContext(ctx, "PRAGMA synchronous = NORMAL"); err != nil {
			t.Fatal(err)
		}
		if got := read(); got != 1 {
			t.Fatalf("round %d: synchronous %d after setting NORMAL, want 1", i, got)
		}
		if _, err := conn.ExecContext(ctx, "PRAGMA synchronous = 2"); err != nil {
			t.Fatal(err)
		}
		if got := read(); got != 2 {
			t.Fatalf("round %d: synchronous %d after setting FULL, want 2", i, got)
		}
	}
}

// A statement prepared before another process changed the table's schema
// runs against the new schema: SQLite prepares it again when it sees the
// change.
func TestPreparedStatementAfterAnotherProcessChangesTheSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "schema.db")
	db := openOneConnAt(t, path)
	const q = `SELECT * FROM t WHERE k = 1`
	columns := func() []string {
		rows, err := db.Query(q)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		cols, err := rows.Columns()
		if err != nil {
			t.Fatal(err)
		}
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if !rows.Next() {
			t.Fatalf("no row: %v", rows.Err())
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		out := make([]string, len(cols))
		for i, c := range cols {
			out[i] = fmt.Sprintf("%s=%v", c, vals[i])
		}
		return out
	}
	if got := fmt.Sprint(columns()); got != "[k=1 v=a]" {
		t.Fatalf("before: %s", got)
	}
	// Another process: a handle of its own, through the driver alone.
	other, err := sql.Open(DriverName, DSN(path))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.Exec(`ALTER TABLE t ADD COLUMN w TEXT NOT NULL DEFAULT 'z'`); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(columns()); got != "[k=1 v=a w=z]" {
		t.Fatalf("after the other process added a column: %s", got)
	}
}
