package mysqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"sync"
	"time"
)

// maintenanceLock is the GET_LOCK name of the maintenance lock, per database.
const maintenanceLock = "reliar.maintenance."

// unlockTimeout bounds RELEASE_LOCK, which runs even when the caller's
// context is done.
const unlockTimeout = 5 * time.Second

// querier is what statements run on: a *sql.DB, *sql.Conn or *sql.Tx.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// getLock takes the named lock of the current database on conn, waiting up
// to wait. Lock names are server-wide, so the name carries the database's;
// its hash is cut to fit the 64-character limit. unlock releases the lock.
func getLock(ctx context.Context, conn *sql.Conn, prefix string, wait time.Duration) (unlock func(), ok bool, err error) {
	var got sql.NullInt64
	err = conn.QueryRowContext(ctx, `SELECT GET_LOCK(CONCAT(?, LEFT(SHA2(DATABASE(), 256), 32)), ?)`,
		prefix, wait.Seconds()).Scan(&got)
	if err != nil {
		return nil, false, err
	}
	if !got.Valid || got.Int64 != 1 {
		return nil, false, nil
	}
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), unlockTimeout)
		defer cancel()
		if _, err := conn.ExecContext(ctx, `DO RELEASE_LOCK(CONCAT(?, LEFT(SHA2(DATABASE(), 256), 32)))`, prefix); err != nil {
			// A session's locks end with the session: close it.
			_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		}
	}, true, nil
}

// TryLockMaintenance takes the table's maintenance lock without waiting, so
// that one maintainer at a time purges it. The lock lives in a connection
// the store keeps out of the pool until unlock; it also ends when that
// connection is lost.
func (s *Store) TryLockMaintenance(ctx context.Context) (unlock func(), ok bool, err error) {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, false, wrapErr("lock maintenance", err)
	}
	release, ok, err := getLock(ctx, conn, maintenanceLock, 0)
	if err != nil || !ok {
		conn.Close()
		return nil, false, wrapErr("lock maintenance", err)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			release()
			conn.Close()
		})
	}, true, nil
}
