package pgstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// Killing every connection of the store's pool in the middle of a run costs
// at most a few transient errors: later calls succeed on new connections.
func TestSurvivesTerminatedPoolConnections(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool, app := dedicatedPool(t, 4)
	s := newStoreOn(t, pool)
	enqueueOn := func(n int) {
		t.Helper()
		msgs := make([]reliar.Outgoing, n)
		for i := range msgs {
			msgs[i] = reliar.NewMsg(orderPlaced{"o"})
		}
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error { _, err := s.Enqueue(ctx, tx, msgs...); return err })
		if err != nil {
			t.Fatal(err)
		}
	}
	enqueueOn(20)
	first, err := s.Acquire(ctx, outboxdriver.AcquireRequest{Worker: "w", BatchSize: 10, Lease: time.Minute})
	if err != nil || len(first.Records) != 10 {
		t.Fatalf("first claim = %d records, %v", len(first.Records), err)
	}

	var killed int
	if err := sharedPool.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid, 5000)) FROM pg_catalog.pg_stat_activity
WHERE application_name = $1`, app).Scan(&killed); err != nil {
		t.Fatal(err)
	}
	if killed == 0 {
		t.Fatal("no pool connection to terminate")
	}

	// Each operation eventually succeeds; failures on the way are
	// transient connection errors, never permanent ones.
	retry := func(op string, f func() error) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			err := f()
			if err == nil {
				return
			}
			if reliar.IsPermanent(err) {
				t.Fatalf("%s after terminate: permanent error %v", op, err)
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s still failing after terminate: %v", op, err)
			}
		}
	}
	var leases []outboxdriver.Lease
	for _, r := range first.Records {
		leases = append(leases, r.Lease())
	}
	retry("Complete", func() error {
		n, err := s.Complete(ctx, leases)
		if err == nil && n != int64(len(leases)) {
			return errors.New("completed a short count")
		}
		return err
	})
	retry("Acquire", func() error {
		b, err := s.Acquire(ctx, outboxdriver.AcquireRequest{Worker: "w", BatchSize: 10, Lease: time.Minute})
		if err == nil && len(b.Records) != 10 {
			t.Fatalf("second claim got %d records, want the other 10", len(b.Records))
		}
		return err
	})
	retry("Stats", func() error {
		st, err := s.Stats(ctx)
		if err == nil && (st.Leased != 10 || st.Pending != 10) {
			t.Fatalf("stats after recovery = %+v", st)
		}
		return err
	})
	retry("Enqueue", func() error {
		return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			_, err := s.Enqueue(ctx, tx, reliar.NewMsg(orderPlaced{"late"}))
			return err
		})
	})
}

// A configured statement timeout bounds the store's statements, sent with
// them in one batch, and does not leak into the pool's sessions.
func TestStatementTimeout(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	pool, _ := dedicatedPool(t, 1)
	s := newStoreOn(t, pool, WithStatementTimeout(200*time.Millisecond))
	// Prepare the statements first: preparing needs the table's lock too,
	// and happens before the timeout is set.
	if _, err := s.Stats(ctx); err != nil {
		t.Fatal(err)
	}

	// Hold a lock that Stats has to wait for.
	locker, err := sharedPool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = locker.Rollback(context.WithoutCancel(ctx)) }()
	if _, err := locker.Exec(ctx, s.n.render(`LOCK TABLE {{table}} IN ACCESS EXCLUSIVE MODE`)); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = s.Stats(ctx)
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "57014" || reliar.IsPermanent(err) {
		t.Fatalf("Stats behind a lock = %v, want a transient 57014 statement timeout", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("Stats took %s to time out", took)
	}
	if err := locker.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Stats(ctx); err != nil {
		t.Fatalf("Stats once the lock is gone: %v", err)
	}
	var setting string
	if err := pool.QueryRow(ctx, "SHOW statement_timeout").Scan(&setting); err != nil {
		t.Fatal(err)
	}
	if setting != "0" {
		t.Fatalf("statement_timeout leaked into the session: %q", setting)
	}
}
