package pgstore

import (
	"context"
	"sync"
	"time"
)

// unlockTimeout bounds the unlock statement of the maintenance lock.
const unlockTimeout = 5 * time.Second

// TryLockMaintenance takes the table's maintenance lock, a session advisory
// lock, without waiting. While it is held, one pooled connection stays
// reserved for it; unlock releases the lock and returns the connection (or
// closes it, which releases the lock too, when the unlock fails). When the
// connection dies the lock is lost with it.
func (s *Store) TryLockMaintenance(ctx context.Context) (unlock func(), ok bool, err error) {
	key := advisoryKey("maintenance", s.n.schema)
	pc, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, false, wrapErr("maintenance lock", err)
	}
	if err := pc.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", key).Scan(&ok); err != nil {
		pc.Release()
		return nil, false, wrapErr("maintenance lock", err)
	}
	if !ok {
		pc.Release()
		return nil, false, nil
	}
	var once sync.Once
	unlock = func() {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), unlockTimeout)
			defer cancel()
			var released bool
			if err := pc.QueryRow(ctx, "SELECT pg_advisory_unlock($1)", key).Scan(&released); err != nil || !released {
				// Ending the session releases every advisory lock it holds.
				closeConn(pc.Hijack())
				return
			}
			pc.Release()
		})
	}
	return unlock, true, nil
}
