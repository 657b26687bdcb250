package sqlitestore

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
)

// TestDispatchWritesCommitAtNormal reads the connection's synchronous
// setting inside a dispatch transaction and a dispatch statement's
// connection: NORMAL (1) with WithAsyncCommit, the handle's FULL (2)
// without it, and FULL again on the connection afterwards.
func TestDispatchWritesCommitAtNormal(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []Option
		want int
	}{
		{"WithAsyncCommit", []Option{WithAsyncCommit()}, 1},
		{"default", nil, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			db, err := Open(filepath.Join(t.TempDir(), "outbox.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			db.SetMaxOpenConns(1)
			if err := Migrate(ctx, db); err != nil {
				t.Fatal(err)
			}
			s, err := New(ctx, db, tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			read := func(q querier) int {
				var v int
				if err := q.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&v); err != nil {
					t.Fatal(err)
				}
				return v
			}
			var inTx, inExec int
			if err := s.dispatchTx(ctx, "test", func(q querier) error { inTx = read(q); return nil }); err != nil {
				t.Fatal(err)
			}
			err = storeWrite(ctx, db, "test", func(ctx context.Context, conn *sql.Conn) error {
				return s.dispatchWrite(ctx, conn, "test", func(ctx context.Context, conn *sql.Conn) error {
					inExec = read(conn)
					return nil
				})
			})
			if err != nil {
				t.Fatal(err)
			}
			if inTx != tc.want || inExec != tc.want {
				t.Errorf("synchronous in a dispatch transaction %d, statement %d; want %d", inTx, inExec, tc.want)
			}
			if got := read(db); got != 2 {
				t.Errorf("synchronous after the writes = %d, want FULL (2)", got)
			}
			// The statements of the other writes (purge, dead letters)
			// keep the connection's setting.
			var other int
			if err := immediate(ctx, db, "test", func(q querier) error { other = read(q); return nil }); err != nil {
				t.Fatal(err)
			}
			if other != 2 {
				t.Errorf("synchronous in another store write = %d, want 2", other)
			}
		})
	}
}
