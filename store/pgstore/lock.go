package pgstore

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// defaultMaintenanceLease is how long the maintenance lease lasts without
// a renewal (WithMaintenanceLease).
const defaultMaintenanceLease = 30 * time.Second

// unlockTimeout bounds the statement that gives the maintenance lease back.
const unlockTimeout = 5 * time.Second

// maintenanceLeaseName names the maintenance lease's row in reliar_leases.
const maintenanceLeaseName = "maintenance"

// Lease statements. Each is one transaction of its own, so they need no
// session state and work through a transaction pooler. The take succeeds
// when no row exists or the row's lease has expired.
const (
	takeLeaseSQL = `INSERT INTO {{schema}}.reliar_leases AS l (name, holder, expires_at)
VALUES ($1, $2, pg_catalog.clock_timestamp() + $3::int8 * interval '1 microsecond')
ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
WHERE l.expires_at <= pg_catalog.clock_timestamp()
RETURNING true`
	renewLeaseSQL = `UPDATE {{schema}}.reliar_leases
SET expires_at = pg_catalog.clock_timestamp() + $3::int8 * interval '1 microsecond'
WHERE name = $1 AND holder = $2 AND expires_at > pg_catalog.clock_timestamp()`
	dropLeaseSQL = `DELETE FROM {{schema}}.reliar_leases WHERE name = $1 AND holder = $2`
)

// TryLockMaintenance takes the table's maintenance lease without waiting:
// a row in the schema's reliar_leases table, held under a random holder id
// and expiring after WithMaintenanceLease (30 s by default) unless renewed.
// While it is held, a goroutine renews it every third of that; unlock stops
// the renewals and deletes the row. A holder that crashed leaves the row
// behind, and another maintainer takes it over once it has expired. The
// lease holds no connection and no session state, so it works through a
// transaction pooler and never outlives its holder by more than the lease.
// A renewal that finds the lease taken over (the holder stalled longer than
// the lease) logs a warning: two purge passes may then overlap, which is
// safe, purges being idempotent.
func (s *Store) TryLockMaintenance(ctx context.Context) (unlock func(), ok bool, err error) {
	holder := pgtype.UUID{Bytes: uuid.New(), Valid: true}
	lease := s.cfg.maintenanceLease
	b := s.newBatch(adminTx)
	b.Queue(s.n.render(takeLeaseSQL), maintenanceLeaseName, holder, micros(lease))
	err = s.send(ctx, b, func(br pgx.BatchResults) error {
		err := br.QueryRow().Scan(&ok)
		if errors.Is(err, pgx.ErrNoRows) {
			ok, err = false, nil
		}
		return err
	})
	if err != nil {
		return nil, false, wrapErr("maintenance lease", err)
	}
	if !ok {
		return nil, false, nil
	}
	rctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.renewLease(rctx, holder, lease)
	}()
	var once sync.Once
	unlock = func() {
		once.Do(func() {
			stop()
			<-done
			ctx, cancel := context.WithTimeout(context.Background(), unlockTimeout)
			defer cancel()
			if _, err := s.exec(ctx, adminTx, "maintenance lease", s.n.render(dropLeaseSQL), maintenanceLeaseName, holder); err != nil {
				// The lease expires on its own.
				s.log.Warn("pgstore: giving the maintenance lease back failed; it expires on its own",
					slog.String("schema", s.n.schema), slog.Duration("lease", lease), slog.Any("error", err))
			}
		})
	}
	return unlock, true, nil
}

// renewLease extends the maintenance lease of holder every third of lease
// until ctx is done.
func (s *Store) renewLease(ctx context.Context, holder pgtype.UUID, lease time.Duration) {
	t := time.NewTicker(lease / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		rctx, cancel := context.WithTimeout(ctx, lease/3)
		n, err := s.exec(rctx, adminTx, "maintenance lease", s.n.render(renewLeaseSQL), maintenanceLeaseName, holder, micros(lease))
		cancel()
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			s.log.Warn("pgstore: renewing the maintenance lease failed; retrying", slog.String("schema", s.n.schema), slog.Any("error", err))
		case n == 0:
			s.log.Warn("pgstore: the maintenance lease expired before its renewal; another maintainer may take it over",
				slog.String("schema", s.n.schema), slog.Duration("lease", lease))
			return
		}
	}
}
